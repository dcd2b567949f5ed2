"""Pure scoring functions of the four specifications. Imports neither Celery nor the database."""
