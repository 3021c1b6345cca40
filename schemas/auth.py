"""Account shapes: register and login requests, the signed-in answer, the user record."""

from marshmallow import fields, validate

from enums import USER_PLANS, USER_ROLES, USER_STATUSES
from schemas.common import CamelSchema, UTCDateTime, enum_of
from schemas.numbers import Integer

EMAIL_MAX = 254
PASSWORD = validate.Length(min=8, max=128)


class TrimmedEmail(fields.Email):
    """An email address; surrounding white space (a paste) is dropped before it is checked."""

    def _deserialize(self, value, attr, data, **kwargs):
        return super()._deserialize(value, attr, data, **kwargs).strip()


class RegisterSchema(CamelSchema):
    """A new account's email and password."""

    email = TrimmedEmail(required=True, validate=validate.Length(max=EMAIL_MAX))
    password = fields.String(required=True, validate=PASSWORD)


class LoginSchema(CamelSchema):
    """Credentials; both may be null or missing, which simply fails to sign in (401)."""

    email = fields.String(
        load_default=None, allow_none=True, validate=validate.Length(max=EMAIL_MAX)
    )
    password = fields.String(
        load_default=None, allow_none=True, validate=validate.Length(max=PASSWORD.max)
    )


class UserSchema(CamelSchema):
    """An account as its owner and admins see it."""

    id = Integer(required=True)
    email = fields.String(required=True)
    role = enum_of(USER_ROLES, required=True)
    plan = enum_of(USER_PLANS, required=True)
    status = enum_of(USER_STATUSES, required=True)
    created_at = UTCDateTime(required=True)


class SessionSchema(CamelSchema):
    """The answer to register and login."""

    user = fields.Nested(UserSchema, required=True)
    access_token = fields.String(required=True)
    token_type = fields.String(required=True, metadata={"enum": ["Bearer"]})
    expires_in = Integer(required=True, metadata={"description": "Token lifetime, seconds."})
