"""Admin shapes: the user listing."""

from marshmallow import fields, validate

from enums import USER_PLANS, USER_STATUSES
from schemas.auth import EMAIL_MAX, UserSchema
from schemas.common import PageArgsSchema, one_of, page_of


class UserQuerySchema(PageArgsSchema):
    """Filters of the user listing."""

    search = fields.String(
        validate=validate.Length(max=EMAIL_MAX),
        metadata={"description": "Part of the email, case-insensitive."},
    )
    plan = one_of(USER_PLANS)
    status = one_of(USER_STATUSES)


UserPageSchema = page_of(UserSchema, "User")
