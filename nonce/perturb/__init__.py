"""Perturbations of agreement items for robustness curves (method.md section 7).

One aspect per module (``qwerty``, ``swap``, ``drop-char``, ``drop-space``,
``articles``, ``marks``, ``digits``, ``semantic``), all behind
:class:`nonce.perturb.base.Aspect`; :func:`perturb_items` applies one of them
to a test set. Adding an aspect is adding a module with a registered class.
"""
from nonce.perturb.apply import PerturbResult, perturb, perturb_items
from nonce.perturb.base import Aspect, Draft, aspect_names, get_aspect, register

__all__ = ["Aspect", "Draft", "PerturbResult", "aspect_names", "get_aspect", "perturb",
           "perturb_items", "register"]
