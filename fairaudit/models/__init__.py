"""Models: training presets, loading, and the structures the verification engines read.

* ``train(dataset, kind, *, seed=0, test_size=0.25, exclude=(), **params) -> Model`` with kind
  ``logreg``, ``tree``, ``gbm`` (scikit-learn) or ``mlp`` (torch).
* ``load(path) -> Model`` for files written by ``Model.save`` and ``.nnet`` networks. Joblib files are
  pickles: only load trusted files from paths the user names, never uploaded bytes.
* ``from_expression(text, dataset) -> Model``: a condition over the rows (``decile_score <= 4``, true = favourable) acting as
  the decision, for auditing logged decisions.
* ``read_nnet`` / ``write_nnet``: the ``.nnet`` format; ``NNetModel`` wraps a network as a Model.

Every ``Model`` predicts from raw rows (``predict`` -> int8, 1 = favourable; ``score`` -> probability of
favourable) and offers ``as_linear()``, ``as_tree()``, ``as_relu_net()`` when it has that structure.
"""
from fairaudit.models.base import Model
from fairaudit.models.encoding import Encoding
from fairaudit.models.expression import ExpressionModel, from_expression
from fairaudit.models.forms import DecisionNode, LinearForm, ReluNet, TreeForm
from fairaudit.models.nnet import NNet, NNetModel, read_nnet, write_nnet
from fairaudit.models.storage import load
from fairaudit.models.training import KINDS, held_out_metrics, held_out_positions, train

__all__ = [
    "Model", "train", "load", "from_expression", "KINDS",
    "LinearForm", "TreeForm", "DecisionNode", "ReluNet", "Encoding",
    "NNet", "NNetModel", "read_nnet", "write_nnet", "ExpressionModel", "held_out_metrics", "held_out_positions",
]
