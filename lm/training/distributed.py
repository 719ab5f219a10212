"""Distributed training glue (torchrun + torch.distributed), kept apart from the loop.

Under ``torchrun --nproc_per_node N`` every process gets RANK, LOCAL_RANK and
WORLD_SIZE in its environment; :func:`init_distributed` joins the process group
(gloo for CPU tensors, nccl for CUDA), and the helpers below are identities in a
single process, so the trainer calls them unconditionally.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import timedelta

import torch
import torch.distributed as dist

from lm.device import resolve_device


@dataclass(frozen=True)
class DistInfo:
    """rank, world (processes), local_rank (index on this machine)."""
    rank: int = 0
    world: int = 1
    local_rank: int = 0


def dist_info() -> DistInfo:
    if dist.is_available() and dist.is_initialized():
        return DistInfo(dist.get_rank(), dist.get_world_size(),
                        int(os.environ.get("LOCAL_RANK", dist.get_rank())))
    return DistInfo()


def init_distributed(device: str = "auto") -> DistInfo:
    """Join torchrun's process group (gloo on CPU, nccl on CUDA) when WORLD_SIZE > 1."""
    if int(os.environ.get("WORLD_SIZE", "1")) <= 1 or dist.is_initialized():
        return dist_info()
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    cuda = resolve_device(device, local_rank=local_rank).type == "cuda"
    if cuda:
        torch.cuda.set_device(local_rank)
    # A long timeout: rank 0 may spend hours preparing a corpus while the others wait.
    dist.init_process_group("nccl" if cuda else "gloo", timeout=timedelta(hours=12))
    return dist_info()


def barrier() -> None:
    if dist.is_available() and dist.is_initialized():
        dist.barrier()


def agree(values: list[float], device: torch.device, info: DistInfo, op="max") -> list[float]:
    """Element-wise max (or sum) over all processes; identity when alone."""
    if info.world == 1:
        return values
    t = torch.tensor(values, dtype=torch.float64, device=device)
    dist.all_reduce(t, op=dist.ReduceOp.MAX if op == "max" else dist.ReduceOp.SUM)
    return t.tolist()


def gather(obj, info: DistInfo) -> list:
    if info.world == 1:
        return [obj]
    out = [None] * info.world
    dist.all_gather_object(out, obj)
    return out


def shutdown_distributed() -> None:
    """Leave torchrun's process group (a no-op when there is none)."""
    if dist.is_available() and dist.is_initialized():
        dist.destroy_process_group()
