"""Logarithmic pooling of the model's probabilities with the de-margined sharp market's.

The published forecast is p proportional to model^w * market^(1 - w): a geometric mixture that
stays a proper distribution, keeps the market's sharpness when w is small and lets the model move
it only where the two disagree. ``w`` is fitted by minimising log loss on past matches only.
"""

import numpy as np

#: Weight on the model while there is too little history to fit one. Measured walk-forward on
#: five leagues and seven seasons, the fitted weights of 1x2 and over/under 2.5 are 0 at every
#: cutoff: the sharp pre-match price already carries what a goals-only model knows, and a model
#: with little history knows even less. So until the data say otherwise, the market alone.
PRIOR_WEIGHT = 0.0

#: Fewer usable past matches than this and fit_weight returns the prior weight: with a few
#: hundred matches the log-loss curve is too flat for its minimum to mean anything.
MIN_ROWS = 300

#: How sure the later half must be that the earlier half's weight helps before it is adopted:
#: its log-loss gain over the prior weight must exceed this many standard errors (a one-sided
#: test at 5 %). Without it, weights of 0.05-0.13 that merely happened to help a later half were
#: adopted, and the published 1x2 forecast scored 0.02 % worse (RPS) than the sharp line alone
#: on each league's third season on; with it the model moves the line only on evidence.
MIN_GAIN_T = 1.645

#: Weights fitted side by side, one per key of a family (a market's lines), are tested together:
#: with k of them, each gain must pass a one-sided test at 5 % ÷ k (Bonferroni), so the family
#: adopts a weight from noise no more often than one weight alone does. Scored exactly (half
#: results as halves), the Asian handicap's lines, each tested at 5 %, adopted the goal model
#: alone at −1.25 on the shared set: its 18 picks were worth −3.6 ± 2.5 % at the close.
FAMILY_ALPHA = 0.05

#: Probabilities are floored here before taking logs, so a zero never becomes -inf.
_FLOOR = 1e-12


def market_available(market_probs) -> np.ndarray:
    """(n,) True where a market row has every probability finite."""
    return np.all(np.isfinite(np.asarray(market_probs, dtype=float)), axis=1)


def pool(model_probs, market_probs, weight) -> np.ndarray:
    """Pooled probabilities p ∝ model^weight · market^(1 - weight), rows summing to 1.

    ``weight`` is a scalar or one value per row. Rows whose market has a NaN get the model alone.
    """
    model = np.asarray(model_probs, dtype=float)
    market = np.asarray(market_probs, dtype=float)
    has_market = market_available(market)
    w = np.broadcast_to(np.asarray(weight, dtype=float), (model.shape[0],))[:, None]
    log_model = np.log(np.clip(model, _FLOOR, None))
    log_market = np.log(np.clip(np.where(has_market[:, None], market, 1.0), _FLOOR, None))
    logits = np.where(has_market[:, None], w * log_model + (1.0 - w) * log_market, log_model)
    logits -= logits.max(axis=1, keepdims=True)
    pooled = np.exp(logits)
    return pooled / pooled.sum(axis=1, keepdims=True)


def usable_rows(model_probs, market_probs, outcome_idx, share=None) -> np.ndarray:
    """(n,) True where a row can train a weight: model and market finite, an outcome known and,
    with ``share``, some of the stake decided."""
    model = np.asarray(model_probs, dtype=float)
    outcome = np.asarray(outcome_idx)
    usable = (
        np.all(np.isfinite(model), axis=1)
        & market_available(market_probs)
        & (outcome >= 0)
        & (outcome < model.shape[1])
    )
    return usable if share is None else usable & (np.asarray(share, dtype=float) > 0)


def _shares(share, n: int) -> np.ndarray:
    """(n,) each row's share of the stake its outcome decided: 1 unless ``share`` says less."""
    return np.ones(n) if share is None else np.asarray(share, dtype=float).reshape(n)


def fit_weight(
    model_probs,
    market_probs,
    outcome_idx,
    prior: float = PRIOR_WEIGHT,
    min_rows: int = MIN_ROWS,
    min_gain_t: float = MIN_GAIN_T,
    share=None,
) -> float:
    """Weight on the model in [0, 1] minimising the pooled log loss of past matches.

    Rows without a market, with a non-finite model or a negative outcome index (no result) are
    skipped; with fewer than ``min_rows`` usable rows the ``prior`` weight is returned. Rows are
    taken to be in time order: a weight is adopted only if the one fitted on the earlier half
    also lowers the log loss of the later half against the ``prior`` weight, by more than
    ``min_gain_t`` standard errors of the per-row gain, so noise in the past does not move the
    forecast off the market.

    ``share`` (n,) weighs each row's log loss by the share of the stake its outcome decided: a
    quarter line's half won or half lost is half a win or a loss (the other half pushed), a push
    is no row at all. Without it every row counts whole.
    """
    model = np.asarray(model_probs, dtype=float)
    market = np.asarray(market_probs, dtype=float)
    outcome = np.asarray(outcome_idx, dtype=np.intp)
    shares = _shares(share, len(outcome))
    keep = usable_rows(model, market, outcome, shares)
    if keep.sum() < min_rows:
        return float(prior)
    rows = np.flatnonzero(keep)
    early, late = rows[: len(rows) // 2], rows[len(rows) // 2 :]
    trial = _best_weight(model[early], market[early], outcome[early], shares[early])
    gain = shares[late] * (
        _row_losses(model[late], market[late], outcome[late], float(prior))
        - _row_losses(model[late], market[late], outcome[late], trial)
    )
    if not gain.mean() > min_gain_t * gain.std(ddof=1) / np.sqrt(len(gain)):
        return float(prior)
    return _best_weight(model[keep], market[keep], outcome[keep], shares[keep])


def family_gain_t(tests: int) -> float:
    """The t a weight's gain must exceed when ``tests`` weights of one family are tested at
    once: :data:`MIN_GAIN_T` for one, a one-sided 5 % ÷ ``tests`` otherwise."""
    if tests <= 1:
        return MIN_GAIN_T
    from scipy.stats import norm  # SciPy loads with the first model run (engine.model)

    return float(norm.ppf(1.0 - FAMILY_ALPHA / tests))


def family_weights(
    key, model_probs, market_probs, outcome_idx, share=None, prior=PRIOR_WEIGHT, min_rows=MIN_ROWS
) -> dict:
    """``{key: weight}``, each fitted by :func:`fit_weight` on its key's rows (in time order),
    tested together: the keys with ``min_rows`` usable rows are the family
    (:func:`family_gain_t`)."""
    key = np.asarray(key)
    model = np.asarray(model_probs, dtype=float)
    market = np.asarray(market_probs, dtype=float)
    outcome = np.asarray(outcome_idx, dtype=np.intp)
    shares = _shares(share, len(key))
    usable = usable_rows(model, market, outcome, shares)
    values = np.unique(key).tolist()
    rows = {value: np.flatnonzero(key == value) for value in values}
    t = family_gain_t(sum(int(usable[mine].sum()) >= min_rows for mine in rows.values()))
    return {
        value: fit_weight(
            model[mine],
            market[mine],
            outcome[mine],
            prior=prior,
            min_rows=min_rows,
            min_gain_t=t,
            share=shares[mine],
        )
        for value, mine in rows.items()
    }


def walk_forward_weights(
    key,
    cutoff,
    kickoff,
    model_probs,
    market_probs,
    outcome_idx,
    prior: float = PRIOR_WEIGHT,
    min_rows: int = MIN_ROWS,
    eligible=None,
    order=None,
    share=None,
    family: bool = False,
) -> np.ndarray:
    """(n,) each row's weight, fitted by :func:`fit_weight` on the eligible rows of its own
    ``key`` (a league, or a league and a line) that kicked off before the row's ``cutoff``.
    With ``family`` the keys are tested together at each cutoff, as :func:`family_weights` does.

    A weight fitted on one key is never applied to another. Rows not ``eligible`` (a goal model
    without history of the key) get 0, the market alone, and train no weight. ``order`` lists the
    rows in kick-off order, ties broken by the caller (default: a stable sort of ``kickoff``); the
    fit validates on the later half of it, so it must not depend on how rows were listed.
    ``share`` weighs rows as :func:`fit_weight` does.
    """
    key = np.asarray(key)
    cutoff = np.asarray(cutoff, dtype=np.int64)
    kickoff = np.asarray(kickoff, dtype=np.int64)
    model = np.asarray(model_probs, dtype=float)
    market = np.asarray(market_probs, dtype=float)
    outcome = np.asarray(outcome_idx, dtype=np.intp)
    n = len(key)
    eligible = np.ones(n, dtype=bool) if eligible is None else np.asarray(eligible, dtype=bool)
    order = np.argsort(kickoff, kind="stable") if order is None else np.asarray(order, np.intp)
    shares = _shares(share, n)
    trains = usable_rows(model, market, outcome, shares) & eligible
    weights = np.zeros(n)
    keys = np.unique(key[eligible])
    trained = {}  # each key's training rows in kick-off order
    for value in keys:
        mine = order[key[order] == value]
        trained[value] = mine[trains[mine]]
    cutoffs = np.unique(cutoff[eligible])
    tested = np.zeros(len(cutoffs), dtype=np.int64)  # per cutoff, the keys with enough rows
    if family:
        for train in trained.values():
            tested += np.searchsorted(kickoff[train], cutoffs, side="left") >= min_rows
    gain_t = dict(zip(cutoffs.tolist(), map(family_gain_t, tested.tolist()), strict=True))
    for value in keys:
        train = trained[value]
        targets = np.flatnonzero((key == value) & eligible)
        fitted = {}  # by past rows and test: weeks without new results share a fit
        for cut in np.unique(cutoff[targets]).tolist():
            past = train[: np.searchsorted(kickoff[train], cut, side="left")]
            t = gain_t[cut]
            if (len(past), t) not in fitted:
                fitted[len(past), t] = fit_weight(
                    model[past],
                    market[past],
                    outcome[past],
                    prior=prior,
                    min_rows=min_rows,
                    min_gain_t=t,
                    share=shares[past],
                )
            weights[targets[cutoff[targets] == cut]] = fitted[len(past), t]
    return weights


def _row_losses(model, market, outcome, weight) -> np.ndarray:
    """Each row's log loss of the pool at ``weight``."""
    pooled = pool(model, market, weight)
    return -np.log(np.clip(pooled[np.arange(len(outcome)), outcome], _FLOOR, None))


def _log_loss(model, market, outcome, shares):
    """The pooled log loss of usable rows, each weighed by its ``shares``, as a function of the
    weight."""
    rows = np.arange(len(outcome))
    mean = shares / shares.sum()
    # Selections along the first axis: the per-row sums below then add whole contiguous rows.
    log_model = np.log(np.clip(model, _FLOOR, None)).T.copy()
    log_market = np.log(np.clip(market, _FLOOR, None)).T.copy()
    diff = log_model - log_market
    mean_picked_market = log_market[outcome, rows] @ mean
    mean_picked_diff = diff[outcome, rows] @ mean

    def loss(w: float) -> float:
        # Each logit lies between the floored logs of two probabilities, in [log(_FLOOR), 0],
        # so exp() can neither overflow nor lose the whole row: no max-shift is needed.
        log_norm = np.log(np.exp(log_market + w * diff).sum(axis=0))
        return float(log_norm @ mean - mean_picked_market - w * mean_picked_diff)

    return loss


def _best_weight(model, market, outcome, shares) -> float:
    """The weight in [0, 1] minimising the pooled log loss of usable rows, weighed by ``shares``."""
    loss = _log_loss(model, market, outcome, shares)
    from scipy.optimize import minimize_scalar  # SciPy loads with the first fit (engine.model)

    result = minimize_scalar(loss, bounds=(0.0, 1.0), method="bounded", options={"xatol": 1e-5})
    # The bounded search never lands exactly on a bound; the loss is convex in w, so when the
    # optimum is a bound that bound itself is the answer.
    best, best_loss = float(result.x), float(result.fun)
    for bound in (0.0, 1.0):
        bound_loss = loss(bound)
        if bound_loss < best_loss:
            best, best_loss = bound, bound_loss
    return best
