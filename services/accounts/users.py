"""Users as operators see them: the admin listing and change, the CLI's create and update."""

from clock import utcnow
from enums import USER_PLANS, USER_ROLES, USER_STATUSES
from errors import CommandError, LastAdmin
from models import User, new_token_stamp
from services.accounts.credentials import EMAIL_MAX, EMAIL_TOO_LONG, PasswordHasher, normalise_email
from services.queries import paginate
from store.database import db, is_sqlite


def search(search=None, plan=None, status=None, page=1, page_size=20) -> dict:
    """One page of users, newest first, filtered by email substring, plan and status."""
    query = User.select()
    if search:
        query = query.where(User.email.contains(normalise_email(search)))
    if plan:
        query = query.where(User.plan == plan)
    if status:
        query = query.where(User.status == status)
    return paginate(query.order_by(User.id.desc()), page, page_size)


def exists(email) -> bool:
    """Whether an account has ``email`` (in any letter case)."""
    return User.by_email(normalise_email(email)) is not None


def _check(role=None, plan=None, status=None):
    for value, allowed, what in (
        (role, USER_ROLES, "role"),
        (plan, USER_PLANS, "plan"),
        (status, USER_STATUSES, "status"),
    ):
        if value is not None and value not in allowed:
            raise CommandError(f"{what} must be one of: {', '.join(allowed)} (got {value!r})")


def create(email, password, hasher: PasswordHasher, role=None, plan=None) -> tuple[User, bool]:
    """Create the user (``user`` and ``free`` unless told otherwise), or give an existing one
    this password and the role and plan given (keeping its own where None); (user, created)."""
    _check(role=role, plan=plan)
    if not 8 <= len(password) <= 128:
        raise CommandError("the password must be 8 to 128 characters long")
    email = normalise_email(email)
    if len(email) > EMAIL_MAX:
        raise CommandError(f"the email is {EMAIL_TOO_LONG}")
    with db.atomic():
        user = User.by_email(email)
        created = user is None
        if created:
            user = User(email=email)  # the model's default role and plan
        user.password_hash = hasher.hash(password)
        user.token_stamp = new_token_stamp()  # tokens issued before the new password end here
        user.role, user.plan = role or user.role, plan or user.plan
        user.updated_at = utcnow()
        user.save()
    return user, created


def update(email, role=None, plan=None, status=None) -> User:
    """Change an existing user's role, plan or status; CommandError if there is no such user."""
    _check(role=role, plan=plan, status=status)
    user = User.by_email(normalise_email(email))
    if user is None:
        raise CommandError(f"no user has the email {email!r}")
    change(user, role=role, plan=plan, status=status)
    return user


def get(user_id: int) -> User:
    """The user with ``user_id``, or NotFound."""
    return User.get_or_raise(user_id, "User")


def change(user: User, role=None, plan=None, status=None, now=None) -> dict:
    """Give ``user`` the role, plan and status given (keeping its own where None) and save it;
    ``{user_id, before, after}``, each a ``{role, plan, status}``. Every token of the account
    has the new ones from its next request: they are read from the database at each one."""
    _check(role=role, plan=plan, status=status)
    keep_an_admin(user, role=role, status=status)
    before = standing(user)
    changed = {"role": role, "plan": plan, "status": status, "updated_at": now or utcnow()}
    changed = {name: value for name, value in changed.items() if value is not None}
    for name, value in changed.items():
        setattr(user, name, value)
    # Only these columns: a password changed meanwhile (its hash, its token stamp) is kept.
    user.save(only=[User._meta.fields[name] for name in changed])
    return {"user_id": user.id, "before": before, "after": standing(user)}


def keep_an_admin(user: User, role=None, status=None) -> None:
    """LastAdmin when giving ``user`` ``role`` and ``status`` would leave no active admin. The
    other active admins are read locked (PostgreSQL; SQLite's write transaction locks the
    whole database), so two admins suspending each other at once cannot both succeed."""
    was_admin = user.role == "admin" and user.status == "active"
    stays_admin = (role or user.role) == "admin" and (status or user.status) == "active"
    if not was_admin or stays_admin:
        return
    others = User.select(User.id).where(
        (User.role == "admin") & (User.status == "active") & (User.id != user.id)
    )
    if not db.is_closed() and db.in_transaction() and not is_sqlite():
        others = others.for_update()
    if not others.exists():
        raise LastAdmin(
            f"{user.email} is the only active admin: make another account an active admin first."
        )


def standing(user: User) -> dict:
    """The user's role, plan and status."""
    return {"role": user.role, "plan": user.plan, "status": user.status}
