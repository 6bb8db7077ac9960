/**
 * The record of one episode, in the rollout format of docs/CONTRACTS.md. Episodes write it,
 * rewards read it, the trainer adds step/group/advantage, the viewer shows it. The types are
 * generated from schemas/rollout-record.schema.json into protocol/ (the trainer validates what it
 * writes against the same schema); the engine calls the record a trajectory.
 */
export type {
  AssistantTurn,
  CallRecord,
  ObservationTurn,
  RolloutRecord as Trajectory,
  TokenViewTurn,
  Turn,
} from '../../protocol/rollout-record.js';
