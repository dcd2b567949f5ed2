"""The UI's own defences against other sites, over a real `evalq api` (SQLite, no broker): the
sign-in form refuses a post from another origin or without its token (login CSRF); every UI
response says how it may be cached; proxy headers are believed only from configured proxies.

Each check is an HTTP request as a browser would send it, plus one probe in Debian's Chromium: a
page of another origin posting the attacker's own key to the sign-in form.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import Route, expect, sync_playwright

from evalq.ui.security import CACHE_CONTROL
from tests.integration.api.conftest import Server, serve_api
from tests.support.browser import patient
from tests.support.processes import HTTP_TIMEOUT
from tests.support.tools import required_program
from tests.support.ui import form_token, sign_in

ATTACKER = "http://attacker.test"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with serve_api("sqlite", tmp_path_factory.mktemp("ui-security"), broker=False) as api:
        yield api


def test_the_sign_in_form_signs_in_with_its_own_token(server: Server) -> None:
    with httpx.Client(base_url=server.url, timeout=HTTP_TIMEOUT) as browser:
        form = browser.get("/ui/login")
        token = form_token(form.text)
        assert form.cookies["evalq_login"] == token  # the double-submit pair
        assert browser.get("/ui/login").cookies["evalq_login"] == token  # a second tab: same
        signed = sign_in(browser, server.keys["read"])
        assert signed.status_code == 303, signed.text
        assert "evalq_session" in signed.cookies
        assert "evalq_login" not in browser.cookies  # the pre-session cookie is dropped
        assert browser.get("/").status_code == 200


def test_a_sign_in_posted_from_another_origin_is_refused_and_sets_nothing(
    server: Server,
) -> None:
    """The attacker's own valid key, even with a token pair the attacker fetched for itself
    (as a sibling subdomain could toss the cookie), from another origin: 403, nothing set."""
    with httpx.Client(base_url=server.url, timeout=HTTP_TIMEOUT) as attacker:
        token = form_token(attacker.get("/ui/login").text)
        data = {"api_key": server.keys["read"], "next": "/", "csrf": token}
        for origin in ({"origin": ATTACKER}, {"origin": "null"}, {"referer": f"{ATTACKER}/x"}):
            refused = attacker.post("/ui/login", data=data, headers=origin)
            assert refused.status_code == 403, (origin, refused.text)
            assert "another origin" in refused.text
            assert "set-cookie" not in refused.headers


def test_a_sign_in_without_the_forms_token_is_refused(server: Server) -> None:
    key = server.keys["read"]
    own = {"origin": server.url}
    with httpx.Client(base_url=server.url, timeout=HTTP_TIMEOUT) as browser:
        bare = browser.post("/ui/login", data={"api_key": key}, headers=own)
        assert bare.status_code == 403 and "the sign-in form&#39;s token" in bare.text
        assert "set-cookie" not in bare.headers
        form_token(browser.get("/ui/login").text)
        for wrong in ("", "x" * 32, "é" * 32):
            refused = browser.post("/ui/login", data={"api_key": key, "csrf": wrong}, headers=own)
            assert refused.status_code == 403, wrong
            assert "evalq_session" not in refused.cookies


@pytest.mark.browser
def test_a_page_of_another_origin_cannot_sign_chromium_in(server: Server) -> None:
    """The probe: a page at another origin auto-submits a form with the attacker's key to the
    sign-in route. Chromium shows the refusal and holds no session afterwards."""
    executable = required_program("chromium", "apt-get install chromium")
    page_html = (
        f'<form id="f" method="post" action="{server.url}/ui/login">'
        f'<input name="api_key" value="{server.keys["read"]}"><input name="next" value="/">'
        '</form><script>document.getElementById("f").submit()</script>'
    )

    def attacker_page(route: Route) -> None:
        route.fulfill(status=200, content_type="text/html", body=page_html)

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        context = patient(browser.new_context())
        page = context.new_page()
        page.goto(f"{server.url}/ui/login")  # the victim has the sign-in page open
        context.route(f"{ATTACKER}/**", attacker_page)
        page.goto(f"{ATTACKER}/prize")
        expect(page.get_by_role("heading", name="Refused")).to_be_visible()
        assert page.url == f"{server.url}/ui/login"
        assert [c["name"] for c in context.cookies()] == ["evalq_login"]
        page.goto(f"{server.url}/")
        expect(page).to_have_url(f"{server.url}/ui/login?next=%2F")
        browser.close()


def test_every_ui_response_says_how_it_may_be_cached(server: Server) -> None:
    """Pages, refusals, redirects, static files, a 404 no route answered, and the 304 of a live
    poll answered before routing (which carried none)."""
    with httpx.Client(base_url=server.url, timeout=HTTP_TIMEOUT) as browser:
        answers = {
            "sign-in redirect": browser.get("/"),
            "sign-in form": browser.get("/ui/login"),
            "refused sign-in": browser.post("/ui/login", data={"api_key": "evq_x"}),
        }
        assert sign_in(browser, server.keys["read"]).status_code == 303
        page = browser.get("/")
        poll = {"if-none-match": page.headers["etag"], "x-evalq-live": "1"}
        answers |= {
            "page": page,
            "poll 304": browser.get("/", headers=poll),
            "no such task": browser.get("/ui/tasks/no-such-task"),
            "no such route": browser.get("/ui/no-such-page"),
            "static file": browser.get("/ui/static/ui.js"),
        }
    assert answers["poll 304"].status_code == 304
    assert answers["no such route"].status_code == 404
    assert answers["no such task"].status_code == 404
    cached = {name: answer.headers.get("cache-control") for name, answer in answers.items()}
    assert cached == dict.fromkeys(answers, CACHE_CONTROL)


def session_cookie_is_secure(server: Server, headers: dict[str, str]) -> bool:
    """Whether signing in with ``headers`` on the post sets a Secure session cookie."""
    with httpx.Client(base_url=server.url, timeout=HTTP_TIMEOUT) as browser:
        token = form_token(browser.get("/ui/login").text)
        data = {"api_key": server.keys["read"], "csrf": token}
        signed = browser.post("/ui/login", data=data, headers=headers)
    assert signed.status_code == 303, signed.text
    cookie = next(c for c in signed.headers.get_list("set-cookie") if "evalq_session=" in c)
    return "secure" in cookie.lower().split("; ")


FORWARDED = {"x-forwarded-proto": "https", "x-forwarded-for": "203.0.113.9"}


def test_proxy_headers_from_a_local_client_are_not_believed_by_default(server: Server) -> None:
    """uvicorn believes X-Forwarded-* from loopback unless told otherwise; `evalq api` believes
    them from nobody until EVALQ_FORWARDED_ALLOW_IPS names the proxy."""
    assert not session_cookie_is_secure(server, FORWARDED)


def test_proxy_headers_from_a_configured_proxy_are_believed(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    directory = tmp_path_factory.mktemp("ui-behind-proxy")
    extra = {"forwarded_allow_ips": "127.0.0.1"}
    with serve_api("sqlite", directory, broker=False, extra=extra) as behind_proxy:
        assert session_cookie_is_secure(behind_proxy, FORWARDED)
        assert not session_cookie_is_secure(behind_proxy, {})
