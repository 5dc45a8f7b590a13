"""Plain structures of a model that the verification engines read.

Every form works on the raw encoding of :mod:`fairaudit.models.encoding` (numeric columns in their own
units, one indicator per category), so ``form.encoding.transform(frame)`` gives the rows a form takes.
Conventions shared by all forms: the output is a *margin*; the decision is favourable (1) iff the
margin is > 0 (linear, ReLU net) or the leaf's probability of favourable is > 0.5 (tree).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from fairaudit.models.encoding import Encoding


@dataclass(frozen=True)
class LinearForm:
    """``margin(x) = weights · x + bias`` over the encoded features; favourable iff margin > 0."""

    weights: np.ndarray  # shape (d,)
    bias: float
    encoding: Encoding

    @property
    def feature_names(self) -> list[str]:
        """Encoded feature names, one per weight."""
        return self.encoding.names

    @property
    def columns(self) -> dict[str, list[int]]:
        """Raw column -> indices of its encoded features (and weights)."""
        return self.encoding.mapping

    def margin(self, X: np.ndarray) -> np.ndarray:
        """Each row's ``x · w + b``, summed over its own features in order (``einsum``, not a BLAS matrix-vector
        product, whose rounding can depend on where the row sits in the batch): a row's score is the same however
        the rows were cut into chunks, so every route gives it the same bits."""
        return np.einsum("ij,j->i", np.ascontiguousarray(X, dtype=np.float64), self.weights) + self.bias

    def predict_encoded(self, X: np.ndarray) -> np.ndarray:
        return (self.margin(X) > 0).astype(np.int8)

    def predict(self, frame: pd.DataFrame) -> np.ndarray:
        return self.predict_encoded(self.encoding.transform(frame))


@dataclass(frozen=True)
class DecisionNode:
    """One node of a decision tree. A split sends a row left iff ``x[feature] <= threshold``.

    ``value`` is the fraction of favourable training rows at the node (at a leaf: the probability of
    favourable the model reports); ``feature``/``threshold``/``left``/``right`` are None at a leaf.
    """

    id: int
    value: float
    samples: int
    feature: int | None = None
    threshold: float | None = None
    left: int | None = None
    right: int | None = None

    @property
    def is_leaf(self) -> bool:
        return self.feature is None


@dataclass(frozen=True)
class TreeForm:
    """A binary decision tree over the encoded features; ``nodes[0]`` is the root, ``nodes[i].id == i``."""

    nodes: tuple[DecisionNode, ...]
    encoding: Encoding

    @property
    def feature_names(self) -> list[str]:
        return self.encoding.names

    @property
    def depth(self) -> int:
        depth = {0: 0}
        for node in self.nodes:  # children always come after their parent
            if not node.is_leaf:
                depth[node.left] = depth[node.right] = depth[node.id] + 1
        return max(depth.values())

    @property
    def leaves(self) -> list[DecisionNode]:
        return [n for n in self.nodes if n.is_leaf]

    def leaf_index(self, X: np.ndarray) -> np.ndarray:
        """The leaf id each row reaches (vectorised: all rows step down one level at a time)."""
        X = np.asarray(X, dtype=np.float64)
        feature = np.array([-1 if n.is_leaf else n.feature for n in self.nodes])
        threshold = np.array([0.0 if n.is_leaf else n.threshold for n in self.nodes])
        left = np.array([-1 if n.is_leaf else n.left for n in self.nodes])
        right = np.array([-1 if n.is_leaf else n.right for n in self.nodes])
        at = np.zeros(len(X), dtype=np.int64)
        rows = np.arange(len(X))
        while True:
            inner = feature[at] >= 0
            if not inner.any():
                return at
            i, node = rows[inner], at[inner]
            go_left = X[i, feature[node]] <= threshold[node]
            at[i] = np.where(go_left, left[node], right[node])

    def score_encoded(self, X: np.ndarray) -> np.ndarray:
        values = np.array([n.value for n in self.nodes])
        return values[self.leaf_index(X)]

    def predict_encoded(self, X: np.ndarray) -> np.ndarray:
        return (self.score_encoded(X) > 0.5).astype(np.int8)

    def predict(self, frame: pd.DataFrame) -> np.ndarray:
        return self.predict_encoded(self.encoding.transform(frame))


@dataclass(frozen=True)
class ReluNet:
    """A fully connected network: ``h = ReLU(W h + b)`` for every layer but the last, which is affine.

    ``layers[k] = (W, b)`` with ``W`` of shape (out, in): row ``r`` holds the incoming weights of neuron
    ``r`` (the ``.nnet`` and torch convention). The single output is a margin; favourable iff > 0.
    ``lower``/``upper`` give the input domain box when the source defines one (``.nnet`` files).
    """

    layers: tuple[tuple[np.ndarray, np.ndarray], ...]
    encoding: Encoding
    lower: np.ndarray | None = None
    upper: np.ndarray | None = None

    @property
    def feature_names(self) -> list[str]:
        return self.encoding.names

    @property
    def sizes(self) -> list[int]:
        """Layer sizes from the input to the output, e.g. [13, 16, 8, 1]."""
        return [self.layers[0][0].shape[1]] + [W.shape[0] for W, _ in self.layers]

    def margin(self, X: np.ndarray) -> np.ndarray:
        h = np.asarray(X, dtype=np.float64)
        for k, (W, b) in enumerate(self.layers):
            h = h @ W.T + b
            if k < len(self.layers) - 1:
                h = np.maximum(h, 0.0)
        return h[:, 0]

    def predict_encoded(self, X: np.ndarray) -> np.ndarray:
        return (self.margin(X) > 0).astype(np.int8)

    def predict(self, frame: pd.DataFrame) -> np.ndarray:
        return self.predict_encoded(self.encoding.transform(frame))
