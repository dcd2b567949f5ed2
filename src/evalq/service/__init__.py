"""The application service between the front doors and the rest: `Client` (submit, wait, read,
review, labels, webhooks, trace rules), the trace sweep, and what a submission's answer is.

The API's routes, the CLI, the UI and the beat call it; it calls the store, the read side and
the broker, and never a door (docs/architecture.md, "Import rules").
"""
