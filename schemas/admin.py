"""Admin shapes: the user listing and an admin's change to an account."""

from marshmallow import ValidationError, fields, validate, validates_schema

from enums import USER_PLANS, USER_ROLES, USER_STATUSES
from schemas.auth import EMAIL_MAX, UserSchema
from schemas.common import CamelSchema, PageArgsSchema, one_of, page_of


class UserQuerySchema(PageArgsSchema):
    """Filters of the user listing."""

    search = fields.String(
        validate=validate.Length(max=EMAIL_MAX),
        metadata={"description": "Part of the email, case-insensitive."},
    )
    plan = one_of(USER_PLANS)
    status = one_of(USER_STATUSES)


UserPageSchema = page_of(UserSchema, "User")


class UserUpdateSchema(CamelSchema):
    """What an admin changes on an account: any of its plan, role and status, at least one."""

    plan = one_of(
        USER_PLANS,
        metadata={"description": "`pro` opens the Data API and the premium fields."},
    )
    role = one_of(USER_ROLES)
    status = one_of(
        USER_STATUSES,
        metadata={"description": "`suspended` refuses every protected endpoint and sign-in."},
    )

    @validates_schema
    def changes_something(self, data, **kwargs):
        """An empty body changes nothing: a 422, so a caller's mistake never reads as done."""
        if not data:
            raise ValidationError("Give at least one of plan, role and status.")
