"""The WSGI entry point gunicorn serves: ``gunicorn wsgi:app``."""

from dotenv import load_dotenv

from app import create_app

load_dotenv()  # a .env file in development; on a PaaS the environment is already set
app = create_app()
