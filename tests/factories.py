"""Test data, built through the same services the app uses."""

from flask_jwt_extended import create_access_token

from services import users

PASSWORD = "correct-horse-battery"


def user(email="user@example.com", password=PASSWORD, role="user", plan="free", status=None):
    """A stored user (needs an app context)."""
    record, _ = users.create(email, password, role=role, plan=plan)
    if status:
        record = users.update(email, status=status)
    return record


def token(record) -> str:
    """A valid access token for ``record`` (needs an app context)."""
    return create_access_token(identity=str(record.id))


def bearer(value) -> dict:
    """Authorization headers carrying ``value``."""
    return {"Authorization": f"Bearer {value}"}


#: kind → (role, plan, status)
KINDS = {
    "free": ("user", "free", None),
    "pro": ("user", "pro", None),
    "operator": ("operator", "free", None),
    "admin": ("admin", "free", None),
    "suspended": ("user", "pro", "suspended"),
    "suspended-admin": ("admin", "free", "suspended"),
}


def people() -> dict:
    """One user of each kind with their auth headers (needs an app context)."""
    found = {}
    for kind, (role, plan, status) in KINDS.items():
        record = user(f"{kind}@example.com", role=role, plan=plan, status=status)
        found[kind] = (record, bearer(token(record)))
    return found
