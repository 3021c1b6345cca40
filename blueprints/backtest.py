"""Backtests over the walk-forward picks."""

from flask.views import MethodView

from schemas.records import BacktestRequestSchema, BacktestSchema
from services.forecasting import backtests
from web.access import SIGNED_IN
from web.blueprint import Blueprint

blp = Blueprint(
    "backtest",
    __name__,
    url_prefix="/api/backtest",
    description="Backtests over the backfilled (walk-forward) picks: any signed-in user.",
    access=SIGNED_IN,
)


@blp.route("/run")
class BacktestRun(MethodView):
    @blp.arguments(BacktestRequestSchema, required=False)
    @blp.response(200, BacktestSchema)
    @blp.doc(operationId="runBacktest")
    def post(self, body):
        """Backtest the backfilled picks that pass the filters"""
        return backtests.run(
            ratings=body["rating"],
            markets=body["market"],
            min_edge=body["min_edge"],
            league_id=body["league_id"],
            date_from=body["date_from"],
            date_to=body["date_to"],
        )
