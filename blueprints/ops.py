"""Operations API endpoints for admins and operators."""

from flask.views import MethodView

from access import OPS, Blueprint
from schemas.ops import HealthSchema
from services import health

blp = Blueprint(
    "ops",
    __name__,
    url_prefix="/api/v1/ops",
    description="Health and long-running operations: role `admin` or `operator`.",
)


@blp.route("/health/services")
class ServiceHealth(MethodView):
    @blp.access(OPS)
    @blp.response(200, HealthSchema)
    def get(self):
        """Database, rate-limit storage and result freshness, with latencies"""
        return health.report()
