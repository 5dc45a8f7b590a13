"""Models: training presets, loading, and the structures the verification engines read.

* ``train(dataset, kind, *, seed=0, test_size=HELD_OUT_SHARE, exclude=(), features=None, on_progress=None,
  **params) -> Model`` with kind ``logreg``, ``tree``, ``gbm`` (scikit-learn) or ``mlp`` (torch); ``on_progress``
  receives a ``fairaudit.base.progress.Progress`` as the fit goes (returning False raises ``TrainingCancelled``).
  The held-out split (``split_rows``, ``fairaudit.models.stratified_split``) and the default logreg fit
  (``fairaudit.models.logistic``: scikit-learn's LogisticRegression objective by Newton's method, the same
  decisions) are numpy alone: training the default logreg imports no scikit-learn.
* ``train_model(dataset, kind, *, seed=0, held_out_share=HELD_OUT_SHARE, features=None, include_protected=False,
  ...) -> Model`` (``fairaudit.models.recipe``): how every route trains a model — the one rule for the features
  (no protected attribute unless asked), the held-out split and the seed; ``held_out(model, dataset) -> HeldOut``:
  the one record of the rows such a model is audited on.
* ``default_features(dataset, include_protected=False)``, ``id_like``, ``leak_warnings``
  (``fairaudit.models.features``): what the front ends train on unless the user chooses, and which feature gives
  the label away.
* ``load(path, *, trust_pickle=False, trusted_types=()) -> Model`` for files written by ``Model.save``
  (skops for scikit-learn kinds, torch state_dict + JSON for mlp), ``.nnet`` networks and a user's own
  scikit-learn classifier saved with skops. The format comes from the content; anything else may be a
  pickle and is refused unless ``trust_pickle=True`` (old ``.joblib`` models: this runs code from the file).
* ``load_bytes(data, filename, *, trusted_types=()) -> Model`` for uploads: safe formats only, never unpickles;
  ``UntrustedTypesError.types`` lists the types a skops file needs before the user accepts them.
* ``from_expression(text, dataset) -> Model``: a condition over the rows (``decile_score <= 4``, true = favourable) acting as
  the decision, for auditing logged decisions; a bare column of several classes (approve / refer / decline) is a
  ``ClassColumnModel`` whose ``pred`` is each row's class. ``decider(text, schema)``: the same without checks, for
  the streaming routes.
* ``with_favourable(model, classes) -> Model``: a model deciding among several classes read as yes/no, favourable where
  its class is one of ``classes`` (``--favourable-class``).
* ``read_nnet`` / ``write_nnet``: the ``.nnet`` format; ``NNetModel`` wraps a network as a Model.

Every ``Model`` predicts from raw rows (``predict`` -> int8, 1 = favourable; ``score`` -> probability of
favourable) and offers ``as_linear()``, ``as_tree()``, ``as_relu_net()`` when it has that structure.
"""
from fairaudit.models.base import Model
from fairaudit.models.encoding import Encoding
from fairaudit.models.expression import ClassColumnModel, ExpressionModel, decider, from_expression
from fairaudit.models.favourable import FavourableClasses, with_favourable
from fairaudit.models.forms import DecisionNode, LinearForm, ReluNet, TreeForm
from fairaudit.models.nnet import NNet, NNetModel, read_nnet, write_nnet
from fairaudit.models.storage import UntrustedTypesError, load, load_bytes
from fairaudit.models.features import default_features, id_like, leak_warnings
from fairaudit.models.training import (HELD_OUT_SHARE, KINDS, TrainingCancelled, held_out_metrics,
                                       held_out_positions, train)
from fairaudit.models.recipe import HeldOut, Recipe, held_out, recipe, train_model

__all__ = [
    "Model", "train", "TrainingCancelled", "HELD_OUT_SHARE", "default_features", "id_like", "leak_warnings", "load", "load_bytes", "UntrustedTypesError", "from_expression", "KINDS",
    "LinearForm", "TreeForm", "DecisionNode", "ReluNet", "Encoding",
    "NNet", "NNetModel", "read_nnet", "write_nnet", "ExpressionModel", "ClassColumnModel", "decider", "FavourableClasses", "with_favourable", "held_out_metrics", "held_out_positions",
    "Recipe", "recipe", "train_model", "HeldOut", "held_out",
]
