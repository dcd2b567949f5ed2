"""The live web UI served by `evalq api` at ``/``: server-rendered pages over the read side.

The pages are a third reader of the read side's models (`evalq.read`): the tasks list, a task's
board, one run, a comparison and the review queue. Sign-in is with an API key; the session is
an HttpOnly, SameSite=Strict cookie signed per key (`evalq.ui.session`); every response carries
a strict Content-Security-Policy (`evalq.ui.security`). docs/ui.md.
"""
