"""``mlp``: a small fully connected ReLU network in torch (default: 2 hidden layers of 16 units).

Trained with Adam on the binary cross-entropy of its single output logit, in float64 so that the
numpy forward pass of :meth:`MLPModel.as_relu_net` matches it to rounding. Training is deterministic
for a given seed (initialisation and shuffling use their own seeded generators).

Size limit: a network has at most :data:`MAX_PARAMETERS` weights and biases (2 million, 16 MB in
float64), checked before anything is allocated, when training and when loading a file.

Saved as one torch file holding the ``state_dict`` and a JSON config; loaded with ``weights_only=True``.
"""
from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import torch
from torch import nn

from fairaudit.base.errors import ModelError
from fairaudit.models.base import (FORMAT, FORMAT_VERSION, Model, Standardiser, canonical_json, sha256,
                                  write_atomic)
from fairaudit.models.encoding import Encoding
from fairaudit.models.forms import ReluNet
from fairaudit.models.base import MAX_MLP_PARAMETERS, report

DEFAULTS = {"hidden": [16, 16], "epochs": 8, "batch_size": 256, "lr": 0.01, "weight_decay": 0.0}
MAX_PARAMETERS = MAX_MLP_PARAMETERS  # weights + biases of one network


def parameter_count(n_inputs: int, hidden: list[int]) -> int:
    """Weights and biases of the network ``n_inputs -> hidden... -> 1``."""
    sizes = [n_inputs, *hidden, 1]
    return sum((a + 1) * b for a, b in zip(sizes, sizes[1:]))


def check_size(n_inputs: int | None, hidden: list[int]) -> None:
    """ModelError when the network would exceed :data:`MAX_PARAMETERS` (before allocating it).
    ``n_inputs=None``: the input count is not known yet; check the lower bound with one input."""
    count = parameter_count(n_inputs or 1, hidden)
    if count > MAX_PARAMETERS:
        layers = f"{hidden[:6]}{' ...' if len(hidden) > 6 else ''}"
        inputs = "" if n_inputs is None else f" on {n_inputs} inputs"
        raise ModelError(f"an mlp with hidden layers {layers}{inputs} has {'at least ' * (n_inputs is None)}"
                         f"{count:,} weights and biases; the limit is {MAX_PARAMETERS:,}")


def build_net(n_inputs: int, hidden: list[int]) -> nn.Sequential:
    check_size(n_inputs, hidden)
    sizes = [n_inputs, *hidden]
    layers: list[nn.Module] = []
    for a, b in zip(sizes, sizes[1:]):
        layers += [nn.Linear(a, b, dtype=torch.float64), nn.ReLU()]
    layers.append(nn.Linear(sizes[-1], 1, dtype=torch.float64))
    return nn.Sequential(*layers)


def mlp_params(params: dict) -> dict:
    """Defaults merged with ``params``; ModelError on an unknown or malformed parameter."""
    unknown = [k for k in params if k not in DEFAULTS]
    if unknown:
        raise ModelError(f"unknown parameter '{unknown[0]}' for kind mlp; expected one of {', '.join(DEFAULTS)}")
    merged = {**DEFAULTS, **params}
    hidden = merged["hidden"]
    if isinstance(hidden, int):
        hidden = [hidden]
    try:
        merged["hidden"] = [int(h) for h in hidden]
        merged["epochs"], merged["batch_size"] = int(merged["epochs"]), int(merged["batch_size"])
        merged["lr"], merged["weight_decay"] = float(merged["lr"]), float(merged["weight_decay"])
    except (TypeError, ValueError, OverflowError):
        raise ModelError("mlp parameters: hidden is a list of layer sizes, epochs and batch_size integers, "
                         "lr and weight_decay numbers") from None
    if min(merged["hidden"], default=1) < 1 or merged["epochs"] < 1 or merged["batch_size"] < 1 or merged["lr"] <= 0:
        raise ModelError("mlp parameters: layer sizes, epochs, batch_size and lr must be positive")
    if not (np.isfinite(merged["lr"]) and np.isfinite(merged["weight_decay"])):
        raise ModelError("mlp parameters: lr and weight_decay must be finite numbers")
    check_size(None, merged["hidden"])  # a lower bound, checked before the data is read
    return merged


def fit_mlp(encoding: Encoding, X: np.ndarray, y: np.ndarray, seed: int, params: dict, progress=None):
    """Train the network on encoded rows; returns (net, standardiser, effective params).

    ``progress`` (a :class:`fairaudit.base.progress.Progress` or None) is told the epochs done after every batch
    (fractions of an epoch); TrainingCancelled when its receiver asks to stop."""
    params = mlp_params(params)
    scaler = Standardiser.fit(X, encoding.numeric_mask)
    inputs = torch.from_numpy(scaler(X))
    targets = torch.from_numpy(y.astype(np.float64))
    with torch.random.fork_rng(devices=[]):  # seeded initialisation without touching the global RNG
        torch.manual_seed(seed)
        net = build_net(X.shape[1], params["hidden"])
    shuffle = torch.Generator().manual_seed(seed)
    optimiser = torch.optim.Adam(net.parameters(), lr=params["lr"], weight_decay=params["weight_decay"])
    loss_fn = nn.BCEWithLogitsLoss()
    epochs = params["epochs"]
    report(progress, 0, epochs, "epochs")
    net.train()
    for epoch in range(epochs):
        order = torch.randperm(len(inputs), generator=shuffle)
        batches = order.split(params["batch_size"])
        for i, batch in enumerate(batches):
            optimiser.zero_grad()
            loss = loss_fn(net(inputs[batch])[:, 0], targets[batch])
            loss.backward()
            optimiser.step()
            report(progress, epoch + (i + 1) / len(batches))
    net.eval()
    return net, scaler, params


class MLPModel(Model):
    """A torch ReLU network behind the raw-row encoding; favourable iff the output logit > 0."""

    kind = "mlp"

    def __init__(self, net: nn.Sequential, encoding: Encoding, scaler: Standardiser, params: dict,
                 metrics: dict | None = None):
        self.net = net
        self.encoding = encoding
        self.scaler = scaler
        self.params = params
        self.metrics = metrics or {}
        self.feature_names = encoding.raw_names
        self._hash: str | None = None

    def logit(self, frame: pd.DataFrame) -> np.ndarray:
        X = torch.from_numpy(self.scaler(self.encoding.transform(frame)))
        with torch.no_grad():
            return self.net(X)[:, 0].numpy()

    def score(self, frame: pd.DataFrame) -> np.ndarray:
        return 1.0 / (1.0 + np.exp(-self.logit(frame)))

    def predict(self, frame: pd.DataFrame) -> np.ndarray:
        return (self.logit(frame) > 0).astype(np.int8)

    def score_and_predict(self, frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        logit = self.logit(frame)
        return 1.0 / (1.0 + np.exp(-logit)), (logit > 0).astype(np.int8)

    def _config(self) -> dict:
        return {"kind": self.kind, "params": self.params, "encoding": self.encoding.to_dict(),
                "scaler": self.scaler.to_dict()}

    @property
    def content_hash(self) -> str:
        if self._hash is None:
            state = self.net.state_dict()
            self._hash = sha256(canonical_json(self._config()),
                                *(name.encode() + state[name].numpy().tobytes() for name in sorted(state)))
        return self._hash

    def describe(self) -> str:
        shape = "-".join(str(h) for h in self.params["hidden"])
        return super().describe().replace("mlp model", f"mlp (ReLU net {shape})", 1)

    def save(self, path) -> None:
        """Write one torch file: the state_dict and a JSON config (no pickled objects)."""
        config = json.dumps({**self._config(), "metrics": self.metrics})
        payload = {"format": FORMAT, "version": FORMAT_VERSION, "kind": self.kind, "config": config,
                   "state_dict": self.net.state_dict()}
        buffer = io.BytesIO()
        torch.save(payload, buffer)
        write_atomic(path, buffer.getvalue())

    @classmethod
    def from_payload(cls, payload: dict) -> "MLPModel":
        config = json.loads(payload["config"])
        encoding = Encoding.from_dict(config["encoding"])
        hidden = [int(h) for h in config["params"]["hidden"]]
        if min(hidden, default=1) < 1:
            raise ValueError(f"hidden layer sizes {hidden[:6]}")
        net = build_net(len(encoding), hidden)  # checks the size before allocating
        net.load_state_dict(payload["state_dict"])
        net.eval()
        return cls(net, encoding, Standardiser.from_dict(config["scaler"]), config["params"], config.get("metrics"))

    def as_relu_net(self) -> ReluNet:
        """The network's layers as numpy arrays, with the input standardisation folded into layer 1."""
        linears = [m for m in self.net if isinstance(m, nn.Linear)]
        layers = [(m.weight.detach().numpy().copy(), m.bias.detach().numpy().copy()) for m in linears]
        layers[0] = self.scaler.fold(*layers[0])
        return ReluNet(layers=tuple(layers), encoding=self.encoding)
