"""The browser tests' patience: Playwright's own timeouts (5 s for an `expect`, 30 s for an
action or a navigation) scaled by `PATIENCE` like every other wait of the suite, so a page the
server computes slowly on a busy machine is waited for, not failed. Importing this module sets
the `expect` timeout; every browser context a test opens goes through `patient`."""

from __future__ import annotations

from playwright.sync_api import BrowserContext, expect

from tests.support.processes import PATIENCE

expect.set_options(timeout=5_000 * PATIENCE)


def patient(context: BrowserContext) -> BrowserContext:
    """``context`` with its actions and navigations given `PATIENCE` times Playwright's 30 s."""
    context.set_default_timeout(30_000 * PATIENCE)
    context.set_default_navigation_timeout(30_000 * PATIENCE)
    return context
