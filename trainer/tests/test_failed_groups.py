"""rl.failed_groups in vistool's trainer, on scripted groups: with 'drop' a group with an episode the env
server failed is never trained and another generation batch replaces it (with dynamic sampling on or
off, within rl.max_num_gen_batches); with 'keep' it is trained. Each group here is (name, rewards,
which episodes failed), and the expected selections are written out by hand."""
from dataclasses import replace

from vistool_trainer.algorithms.dynamic_sampling import sample_informative_groups
from vistool_trainer.algorithms.failed_groups import failed_group_metrics
from vistool_trainer.run.run_config import resolve_config
from vistool_trainer.trainers.grpo import short_step_warning


def rewards(group):
    return group[1]


def without_failure(group):
    return not any(group[2])


def episode_failed(episode):
    return episode


def names(groups):
    return [group[0] for group in groups]


def scripted(batches):
    calls = []

    def generate(batch_index):
        calls.append(batch_index)
        return batches[batch_index]

    return generate, calls


OK, FAILED = [False, False], [True, False]


def test_drop_without_dynamic_sampling_replaces_a_failed_group_from_a_second_batch():
    generate, calls = scripted([
        [("a", [0, 0], OK), ("b", [1, 0], FAILED), ("c", [1, 1], OK)],
        [("d", [0, 0], OK), ("e", [0, 1], OK), ("f", [1, 1], OK)],
    ])
    outcome = sample_informative_groups(generate, rewards, 3, 4, enabled=False, usable=without_failure)
    # Plain GRPO keeps flat groups; the failed one is replaced by the next batch's first, the rest are surplus.
    assert names(outcome.kept) == ["a", "c", "d"]
    assert names(outcome.unusable) == ["b"]
    assert calls == [0, 1] and outcome.reached_target and outcome.dropped_groups == 0


def test_keep_without_dynamic_sampling_trains_the_failed_group_from_one_batch():
    generate, calls = scripted([[("a", [0, 0], OK), ("b", [1, 0], FAILED), ("c", [1, 1], OK)]])
    outcome = sample_informative_groups(generate, rewards, 3, 4, enabled=False, usable=None)
    assert names(outcome.kept) == ["a", "b", "c"] and outcome.unusable == [] and calls == [0]


def test_drop_with_dynamic_sampling_refuses_a_failed_group_even_with_spread_and_counts_it_apart():
    generate, calls = scripted([
        [("a", [0, 1], FAILED), ("b", [1, 1], OK), ("c", [1, 0], OK)],
        [("d", [1, 1], FAILED), ("e", [0, 1], OK)],
    ])
    outcome = sample_informative_groups(generate, rewards, 2, 4, enabled=True, usable=without_failure)
    assert names(outcome.kept) == ["c", "e"]
    assert names(outcome.unusable) == ["a", "d"]
    # Only b was dropped for its flat rewards: a failed group is never also a dynamic-sampling drop.
    assert outcome.dropped_groups == 1 and calls == [0, 1]


def test_keep_with_dynamic_sampling_judges_a_failed_group_by_its_spread_alone():
    generate, _ = scripted([[("a", [0, 1], FAILED), ("b", [1, 1], FAILED), ("c", [1, 0], OK)]])
    outcome = sample_informative_groups(generate, rewards, 2, 4, enabled=True, usable=None)
    assert names(outcome.kept) == ["a", "c"] and outcome.dropped_groups == 1 and outcome.unusable == []


def test_the_refill_stops_at_max_num_gen_batches_with_what_it_kept():
    # Two groups wanted. One batch allowed: its good group is all the step gets.
    generate, calls = scripted([[(f"ok{i}", [0, 0], OK), (f"bad{i}", [0, 1], FAILED)] for i in range(5)])
    outcome = sample_informative_groups(generate, rewards, 2, 1, enabled=False, usable=without_failure)
    assert names(outcome.kept) == ["ok0"] and not outcome.reached_target and calls == [0]
    # Three batches allowed, every group failed: three batches drawn, nothing kept.
    generate, calls = scripted([[(f"bad{i}", [0, 1], FAILED)] for i in range(5)])
    outcome = sample_informative_groups(generate, rewards, 2, 3, enabled=False, usable=without_failure)
    assert outcome.kept == [] and names(outcome.unusable) == ["bad0", "bad1", "bad2"] and calls == [0, 1, 2]


def test_the_three_metrics_count_dropped_and_trained_failed_groups_by_the_bridges_names():
    dropped = [[True, False, True]]
    trained = [[False, False], [True, False], [False, False]]
    assert failed_group_metrics(dropped, trained, episode_failed) == {
        "env/failed_episodes": 3.0,  # two in the dropped group, one in the trained one
        "env/failed_groups_dropped": 1.0,
        "env/failed_groups_kept": 1.0,
    }
    assert failed_group_metrics([], [[False], [False]], episode_failed) == {
        "env/failed_episodes": 0.0, "env/failed_groups_dropped": 0.0, "env/failed_groups_kept": 0.0}


def test_a_short_step_warns_with_each_cause_counted():
    rl = replace(resolve_config({}).rl, prompts_per_step=8, max_num_gen_batches=4, dynamic_sampling_metric="accuracy")
    metrics = {"sampling/kept_groups": 5.0, "sampling/gen_batches": 4.0, "sampling/dropped_groups": 6.0, "env/failed_groups_dropped": 2.0}
    assert short_step_warning(metrics, rl) == (
        "the step trains 5 of 8 groups after 4 generation batches (rl.max_num_gen_batches 4): 2 dropped for an episode the env server "
        "could not step or score (rl.failed_groups 'drop'; the reasons are in those rollouts' notes); 6 dropped by dynamic sampling "
        "for identical accuracy values")
    only_failures = {**metrics, "sampling/dropped_groups": 0.0}
    assert "dynamic sampling" not in short_step_warning(only_failures, rl)
    assert "failed_groups" not in short_step_warning({**metrics, "env/failed_groups_dropped": 0.0}, rl)
