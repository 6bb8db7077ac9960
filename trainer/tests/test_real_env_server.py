"""The rollout loop and the SFT replay against the real `vistool serve` on real generated tasks."""
from pathlib import Path

from vistool_trainer.config import PolicyConfig, from_dict
from vistool_trainer.model.policy import Policy
from vistool_trainer.rollouts.rollout import EpisodeOptions, load_tasks, run_rollouts
from vistool_trainer.trainers.sft import gold_conversations


def test_rollouts_through_the_real_env_server_carry_server_trajectories_and_scores(env_server, vbar_data):
    client, _ = env_server
    tasks = load_tasks(vbar_data[0])
    policy = Policy.create(from_dict(PolicyConfig, {"model": "micro", "micro": {"vocab_size": 400}}), [t["question"] for t in tasks] * 5, 1, "cpu")
    rollouts = run_rollouts(policy, client, tasks[:2], 2, EpisodeOptions(max_turns=2, presentation={"system_prompt": ""}), 8, 1.0)
    assert [(r.prompt_id, r.group) for r in rollouts] == [(tasks[0]["id"], 0), (tasks[0]["id"], 1), (tasks[1]["id"], 0), (tasks[1]["id"], 1)]
    for rollout in rollouts:
        assert rollout.turns >= 1
        assert rollout.trajectory["prompt_id"] == rollout.prompt_id
        assert {"accuracy", "format"} <= set(rollout.components)
        # A random micro policy writes no valid call or answer: the server says so (E1) and scores it.
        assert rollout.correct is False


def test_gold_replay_shows_the_edited_image_the_gold_call_produced(env_server, vbar_data):
    client, _ = env_server
    tasks = load_tasks(vbar_data[0])[:3]
    replayed: list[int] = []
    conversations = gold_conversations(client, tasks, EpisodeOptions(max_turns=2, presentation={"system_prompt": ""}), chunk=2,
                                       progress=replayed.append)
    assert replayed == [2, 3]  # after each chunk, the count so far
    for task, conversation in zip(tasks, conversations):
        messages = conversation.messages
        roles = [message["role"] for message in messages]
        assert roles == ["user", "assistant", "tool", "assistant"], roles
        tool_images = [part for part in messages[2]["content"] if part["type"] == "image"]
        question_images = [part for part in messages[0]["content"] if part["type"] == "image"]
        assert len(tool_images) == 1 and tool_images[0]["ref"] != question_images[0]["ref"]
        assert task["gold"][0]["name"] in messages[1]["content"][0]["text"]
        assert messages[3]["content"][0]["text"].startswith("<answer>")


def test_a_server_for_data_in_two_trees_gets_each_folder_as_a_root_never_their_common_parent(tmp_path, vbar_data):
    """The trainer passes the training and the held-out folders; their common parent (here a temp
    folder, for data in /data and /home it would be /) is never an allowed root."""
    import shutil

    from vistool_trainer.rollouts.env_client import LocalEnvServer

    train_dir = vbar_data[0].parent
    eval_dir = tmp_path / "elsewhere" / "eval"
    shutil.copytree(vbar_data[1].parent, eval_dir)
    server = LocalEnvServer([train_dir, eval_dir], tmp_path / "images", tmp_path / "token", tmp_path / "server.log")
    client = server.__enter__()
    try:
        command = server.process.args
        roots = [command[i + 1] for i, arg in enumerate(command) if arg == "--root"]
        assert roots == [str(train_dir), str(eval_dir)]
        # The allocator setting that lets the server give its peak back (env_client.SERVER_MALLOC_ENV)
        # is in the node process's own environment, as the kernel started it.
        environ = Path(f"/proc/{server.process.pid}/environ").read_bytes().split(b"\0")
        assert b"MALLOC_MMAP_THRESHOLD_=65536" in environ
        tasks = load_tasks(vbar_data[0])[:1] + load_tasks(eval_dir / "tasks.jsonl")[:1]
        conversations = gold_conversations(client, tasks, EpisodeOptions(max_turns=2, presentation={"system_prompt": ""}))
        assert all(conversation.messages[-1]["content"][0]["text"].startswith("<answer>") for conversation in conversations)
        import pytest

        from vistool_trainer.rollouts.env_client import EnvServerError

        payload = {k: v for k, v in tasks[0].items() if not k.startswith("_")}
        with pytest.raises(EnvServerError, match="outside the allowed roots"):
            client.start_episodes([{"task": payload, "task_dir": str(tmp_path)}])  # a folder that is neither root
    finally:
        server.__exit__(None, None, None)


def test_an_episode_the_server_cannot_score_scores_0_with_the_reason_and_the_rollouts_go_on(env_server, vbar_data):
    """One item of a batch fails for real (its episode was closed before scoring: the server
    answers 404 for it): that rollout gets reward 0 and a note, the others their scores."""
    from vistool_trainer.rollouts.env_client import EnvClient
    from vistool_trainer.rollouts.rollout import RolloutTiming

    client, _ = env_server

    class ClosesOneEpisodeFirst(EnvClient):
        def score_episodes(self, episode_ids, soft=False):
            self.close_episode(episode_ids[0])
            return super().score_episodes(episode_ids, soft)

    closing = ClosesOneEpisodeFirst(client.url, client.token)
    tasks = load_tasks(vbar_data[0])[:1]
    policy = Policy.create(from_dict(PolicyConfig, {"model": "micro", "micro": {"vocab_size": 400}}), [t["question"] for t in tasks] * 5, 1, "cpu")
    timing = RolloutTiming()
    rollouts = run_rollouts(policy, closing, tasks, 3, EpisodeOptions(max_turns=1, presentation={"system_prompt": ""}), 6, 1.0, timing=timing)
    assert len(rollouts) == 3 and timing.env_errors == 1
    failed, *rest = rollouts
    assert failed.reward == 0.0 and failed.components == {}
    assert any("could not score this episode (HTTP 404)" in note for note in failed.notes), failed.notes
    assert all(r.components and "accuracy" in r.components for r in rest)
    assert [r.env_failed for r in rollouts] == [True, False, False]


def test_an_episode_the_server_cannot_step_is_marked_env_failed_and_its_siblings_are_not(env_server, vbar_data):
    """The step of one episode fails for real (closed before its turn reaches the server: 404)."""
    from vistool_trainer.rollouts.env_client import EnvClient
    from vistool_trainer.rollouts.rollout import RolloutTiming

    client, _ = env_server

    class ClosesOneEpisodeBeforeItsTurn(EnvClient):
        def step_episodes(self, items, soft=False):
            self.close_episode(items[-1]["episode_id"])
            return super().step_episodes(items, soft)

    tasks = load_tasks(vbar_data[0])[:1]
    policy = Policy.create(from_dict(PolicyConfig, {"model": "micro", "micro": {"vocab_size": 400}}), [t["question"] for t in tasks] * 5, 1, "cpu")
    timing = RolloutTiming()
    rollouts = run_rollouts(policy, ClosesOneEpisodeBeforeItsTurn(client.url, client.token), tasks, 2,
                            EpisodeOptions(max_turns=1, presentation={"system_prompt": ""}), 6, 1.0, timing=timing)
    assert [r.env_failed for r in rollouts] == [False, True]
    assert any("could not take this turn (HTTP 404)" in note for note in rollouts[1].notes), rollouts[1].notes
    # Its score fails too (the episode is gone): two errors, one failed episode.
    assert timing.env_errors == 2 and rollouts[1].reward == 0.0
