"""model/patch_embedding.py: on CPU the vision tower's patch embedding runs as a matmul; the same
numbers (outputs and weight gradients, compared with the library's Conv3d run on the same
weights), the same weights and state dict, and only for a bias-free Conv3d with kernel == stride."""
import copy

import torch

from vistool_trainer.config import PolicyConfig, from_dict
from vistool_trainer.model.patch_embedding import is_linear_patch_conv, use_matmul_patch_embedding
from vistool_trainer.model.policy import Policy

CORPUS = ["Question: Is D low, medium or high?", "<answer>low</answer>"] * 20


def test_the_matmul_forward_gives_the_conv3ds_outputs_and_gradients():
    policy = Policy.create(from_dict(PolicyConfig, {"model": "micro", "micro": {"vocab_size": 300}}), CORPUS, 1, "cpu")
    patched = policy.model.model.visual.patch_embed
    assert "forward" in vars(patched)  # the CPU policy got the matmul forward
    library = copy.deepcopy(patched)
    del library.forward  # back to the class's Conv3d forward
    assert "forward" not in vars(library)
    torch.manual_seed(0)
    pixels = torch.randn(5 * 128, patched.proj.weight[0].numel())
    ours, theirs = patched(pixels), library(pixels)
    torch.testing.assert_close(ours, theirs, rtol=1e-5, atol=1e-5)
    ours.pow(2).sum().backward()
    theirs.pow(2).sum().backward()
    # Sums over 640 patches in another order: equal to float32 rounding at the gradient's scale.
    difference = (patched.proj.weight.grad - library.proj.weight.grad).abs().max()
    assert difference <= 1e-5 * library.proj.weight.grad.abs().max(), difference
    # The weights and the state dict are the Conv3d's: a checkpoint is unchanged.
    assert set(policy.model.state_dict()) == set(copy.deepcopy(policy.model).state_dict())
    assert isinstance(patched.proj, torch.nn.Conv3d) and patched.proj.weight.shape[2:] == (2, 14, 14)


def test_only_a_non_overlapping_bias_free_patch_conv_is_changed():
    class FakeVisionPatchEmbed(torch.nn.Module):
        def __init__(self, stride, bias=False):
            super().__init__()
            self.proj = torch.nn.Conv3d(3, 4, kernel_size=(2, 14, 14), stride=stride, bias=bias)

    assert is_linear_patch_conv(FakeVisionPatchEmbed((2, 14, 14)))
    assert not is_linear_patch_conv(FakeVisionPatchEmbed((1, 7, 7)))  # overlapping windows: not one matmul
    assert not is_linear_patch_conv(FakeVisionPatchEmbed((2, 14, 14), bias=True))
    model = torch.nn.Sequential(FakeVisionPatchEmbed((1, 7, 7)), FakeVisionPatchEmbed((2, 14, 14)))
    assert use_matmul_patch_embedding(model) == 1
