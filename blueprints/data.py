"""Data API endpoints for Pro subscribers and admins."""

from flask.views import MethodView

from access import DATA, DATA_USAGE, Blueprint, current_viewer
from schemas.data import CatalogSchema, UsageSchema
from services import catalog, quotas

blp = Blueprint(
    "data",
    __name__,
    url_prefix="/api/v1/data",
    description="Catalog, matches, track record, exports and usage: plan `pro` or role `admin`.",
)


@blp.route("/catalog")
class Catalog(MethodView):
    @blp.access(DATA)
    @blp.response(200, CatalogSchema)
    def get(self):
        """Resources with their fields, filters, includes and formats; leagues with their data"""
        return catalog.catalog()


@blp.route("/usage")
class Usage(MethodView):
    @blp.access(DATA_USAGE)
    @blp.response(200, UsageSchema)
    def get(self):
        """This month's consumption and quota state (this call is not counted)"""
        return quotas.usage(current_viewer())
