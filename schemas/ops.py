"""Operations API shapes: service health."""

from marshmallow import fields

from schemas.common import CamelSchema

HEALTH = ["ok", "degraded", "down"]


class ServiceHealthSchema(CamelSchema):
    """One dependency's state."""

    name = fields.String(
        required=True,
        metadata={"enum": ["database", "rate-limit-storage", "settlement", "calibration"]},
    )
    status = fields.String(required=True, metadata={"enum": HEALTH})
    latency_ms = fields.Float(required=True)
    detail = fields.String(required=True)


class HealthSchema(CamelSchema):
    """The service's health: `down` when the database is, `degraded` when anything else is off."""

    status = fields.String(required=True, metadata={"enum": HEALTH})
    services = fields.List(fields.Nested(ServiceHealthSchema), required=True)
    version = fields.String(required=True)
    uptime_seconds = fields.Float(required=True)
