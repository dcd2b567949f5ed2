"""Pure metric functions of the three tiers. Imports neither Celery nor the database."""
