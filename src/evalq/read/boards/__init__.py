"""The board wing: what the merge and the refresh write for the boards (`projector`)."""
