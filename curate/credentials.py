"""Keeping keys out of files and output: telling a key from the NAME of its variable, refusing
credentials in URLs, and masking keys out of the texts servers send back."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit, urlunsplit

from curate.errors import InputError

# How the keys of well-known services begin (OpenAI's sk- and sk-proj-, Anthropic, Stripe, Hugging
# Face, GitHub, Slack, AWS, Google, GitLab, Groq, xAI; eyJ is the base64 of '{"', the start of every JWT).
KEY_PREFIXES = ("sk-", "sk_", "pk_", "rk_", "hf_", "ghp_", "gho_", "ghs_", "ghu_", "github_pat_", "xoxb-",
                "xoxp-", "AKIA", "AIza", "glpat-", "gsk_", "xai-", "eyJ")
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
UPPER_SNAKE = re.compile(r"[A-Z][A-Z0-9]*(_[A-Z0-9]*)*")
# Query parameters that carry a credential (compared lower-cased, '-' read as '_').
SECRET_PARAMS = frozenset({"key", "token", "api_key", "apikey", "access_token", "auth_token", "secret",
                           "client_secret", "password", "sig", "signature"})
SECRET_ENDINGS = ("key", "token", "secret", "password")
_TOKEN = re.compile(r"[A-Za-z0-9_\-]+")
MASK = "***"
# What may follow the start of a key in an echo of it: more key characters, or the stars a server
# puts in place of the middle ("sk-abc123***xyz"); a dot only inside (a JWT's), not ending a sentence.
_KEY_TAIL = r"(?:[A-Za-z0-9_\-~+/=*]|\.(?=[A-Za-z0-9_\-]))*"


def _plain_name(value: str) -> bool:
    """Return whether `value` reads as words of one case joined by '_' (hf_token, AKIA_ROLE)."""
    return bool(ENV_NAME.fullmatch(value)) and (value.isupper() or value.islower()) \
        and not any(c.isdigit() for c in value)


def _entropy(value: str) -> float:
    """Return the Shannon entropy of `value`'s characters, in bits per character."""
    counts = Counter(value)
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())


def looks_like_secret(value: str | None) -> bool:
    """Return whether `value` looks like a key rather than the name of an environment variable.

    A key: a well-known key prefix followed by 8 or more characters (unless the whole is plain words,
    as in hf_token), anything that is not a valid variable name ([A-Za-z_][A-Za-z0-9_]*), or a long
    (20+) high-entropy token mixing letters and digits that is not UPPER_SNAKE_CASE.

    >>> [looks_like_secret(v) for v in ("OPENAI_API_KEY", "MY_JUDGE_KEY", "DASHSCOPE_API_KEY", "hf_token")]
    [False, False, False, False]
    >>> [looks_like_secret(v) for v in ("sk-live-abc123", "hf_AbCdEfGhIjKlMnOp", "AKIAIOSFODNN7EXAMPLE")]
    [True, True, True]
    >>> looks_like_secret("$OPENAI_API_KEY"), looks_like_secret("Xk9fL2mQ8rT5vB7nW3pZa4")
    (True, True)
    >>> looks_like_secret("c10c0baf8d795b953641edb64e714c48"), looks_like_secret("qwen2_5_72b_instruct_key")
    (True, False)
    >>> looks_like_secret(""), looks_like_secret(None)
    (False, False)
    """
    if not value:
        return False
    if not ENV_NAME.fullmatch(value):
        return True
    if not _plain_name(value) and any(value.startswith(p) and len(value) >= len(p) + 8 for p in KEY_PREFIXES):
        return True
    if len(value) < 20 or UPPER_SNAKE.fullmatch(value):
        return False
    # Names are words joined by '_' or in CamelCase, with a number here and there; a random token
    # has a long stretch where digits and single lower-case letters keep interrupting each other.
    stretch = max(value.split("_"), key=len)
    if len(stretch) < 16:
        return False
    digit_runs = len(re.findall(r"[0-9]+", stretch))
    lone_lower = len(re.findall(r"(?<![a-z])[a-z](?![a-z])", stretch))
    return digit_runs > 0 and (digit_runs >= 3 or lone_lower >= 2) and _entropy(value) >= 3.0


def mask(text: str, secrets: Iterable[str | None]) -> str:
    """Return `text` with every occurrence of each secret, and of an echo of it that starts with its
    first 8 or more characters, replaced by ***.

    >>> mask("Incorrect API key provided: sk-abc123def456ghi789.", ["sk-abc123def456ghi789"])
    'Incorrect API key provided: ***.'
    >>> mask("key sk-abc123***i789 is invalid", ["sk-abc123def456ghi789", None])
    'key *** is invalid'
    >>> mask("nothing to hide", [])
    'nothing to hide'
    """
    for secret in secrets:
        if not secret:
            continue
        text = text.replace(secret, MASK)
        if len(secret) >= 8:
            text = re.sub(re.escape(secret[:8]) + _KEY_TAIL, MASK, text)
    return text


def check_key_env_name(value: str | None, *, field: str, file: str | None = None,
                       line: int | None = None) -> str | None:
    """Return `value` when it can be the name of an environment variable; raise InputError (which
    never repeats the value) when it looks like a key.

    >>> check_key_env_name("OPENAI_API_KEY", field="--judge-api-key-env")
    'OPENAI_API_KEY'
    >>> check_key_env_name("sk-proj-abc123def456", field="--judge-api-key-env")
    Traceback (most recent call last):
    ...
    curate.errors.InputError: field '--judge-api-key-env': looks like a key, not the NAME of an environment variable: put the key in the environment (export OPENAI_API_KEY=...) and give its name here
    """
    if looks_like_secret(value):
        raise InputError("looks like a key, not the NAME of an environment variable: put the key in the "
                         "environment (export OPENAI_API_KEY=...) and give its name here", file=file, line=line, field=field)
    return value


def _secret_param(name: str) -> bool:
    """Return whether a query parameter's name says it carries a credential: one of SECRET_PARAMS, or
    a name ending in key, token, secret or password (x-api-key, subscription-key, id_token, ...)."""
    name = name.lower().replace("-", "_")
    return name in SECRET_PARAMS or name.endswith(SECRET_ENDINGS)


def _keyish(value: str, *, random_token: bool = True) -> bool:
    """Return whether a part of a URL looks like a key: a well-known key prefix and 8 more characters,
    or (`random_token`) a long random token: 24 or more letters, digits, '-' and '_', both letters
    and digits, at least 3.5 bits of entropy per character.

    >>> _keyish("sk-proj-abc123def456"), _keyish("c10c0baf8d795b953641edb64e714c48"), _keyish("2024-02-15-preview")
    (True, True, False)
    """
    if any(value.startswith(p) and len(value) >= len(p) + 8 for p in KEY_PREFIXES):
        return True
    return random_token and len(value) >= 24 and bool(_TOKEN.fullmatch(value)) and _entropy(value) >= 3.5 \
        and any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


def _secret_pair(name: str, value: str) -> bool:
    """Return whether a query parameter carries a credential: by its name, or a value (or a bare name,
    ?TOKEN) that looks like a key."""
    return _secret_param(name) or _keyish(value) or _keyish(name)


def _secret_path(path: str) -> bool:
    """Return whether a part of a URL's path starts like a well-known key (a path holds ids and model
    names, which a random-token rule would take for keys)."""
    return any(_keyish(unquote(part), random_token=False) for part in path.split("/"))


def mask_url(url: str) -> str:
    """Return `url` with the password of its user:password@ part, the values of credential query
    parameters (key, token, api_key, ...) or of values that look like keys, a path part that starts
    like a key, and any #fragment replaced by ***.

    >>> mask_url("https://user:pass@judge.example/v1?api_key=abc&region=eu")
    'https://user:***@judge.example/v1?api_key=%2A%2A%2A&region=eu'
    >>> mask_url("https://judge.example/v1#sk-live-4fQ9zX2pL7mN3vB8")
    'https://judge.example/v1#***'
    >>> mask_url("http://127.0.0.1:8080/v1")
    'http://127.0.0.1:8080/v1'
    """
    try:
        parts = urlsplit(url)
    except ValueError:   # an unclosed [ in the host: nothing of it is shown
        return MASK
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    secret_pairs = any(_secret_pair(name, value) for name, value in pairs)
    if "@" not in parts.netloc and not secret_pairs and not parts.fragment and not _secret_path(parts.path):
        return url  # as given, not re-encoded
    netloc, query, path = parts.netloc, parts.query, parts.path
    if "@" in netloc:
        userinfo, host = netloc.rsplit("@", 1)
        user, has_password, _ = userinfo.partition(":")
        netloc = f"{user}:{MASK}@{host}" if has_password else f"{MASK}@{host}"
    if secret_pairs:
        query = urlencode([(MASK, MASK) if _keyish(name) else (name, MASK if _secret_pair(name, value) else value)
                           for name, value in pairs])
    if _secret_path(path):
        path = "/".join(quote(MASK) if _keyish(unquote(part), random_token=False) else part for part in path.split("/"))
    return urlunsplit((parts.scheme, netloc, path, query, MASK if parts.fragment else ""))


JUDGE_HINT = "keys belong in the environment: name the variable with api_key_env (--judge-api-key-env)"


def check_base_url(url: str | None, *, field: str, file: str | None = None, line: int | None = None,
                   hint: str = JUDGE_HINT) -> str | None:
    """Return `url` when it carries no credentials; raise InputError (naming only the host, never the
    secret) when it has a user:password@ part, a #fragment (an API URL has none), a query parameter
    such as key, token or api_key or whose value looks like a key, or a path part that starts like
    a key; `hint` says where the key belongs instead.

    >>> check_base_url("http://127.0.0.1:8080/v1", field="--judge-base-url")
    'http://127.0.0.1:8080/v1'
    >>> check_base_url("https://user:pass@judge.example/v1", field="--judge-base-url")
    Traceback (most recent call last):
    ...
    curate.errors.InputError: field '--judge-base-url': the URL of judge.example carries credentials (user:password@); keys belong in the environment: name the variable with api_key_env (--judge-api-key-env)
    >>> check_base_url("https://judge.example/v1?api_key=abc", field="base_url")
    Traceback (most recent call last):
    ...
    curate.errors.InputError: field 'base_url': the URL of judge.example carries credentials (query parameter api_key); keys belong in the environment: name the variable with api_key_env (--judge-api-key-env)
    >>> check_base_url("https://judge.example/v1#sk-live-4fQ9zX2pL7mN3vB8", field="base_url")
    Traceback (most recent call last):
    ...
    curate.errors.InputError: field 'base_url': the URL of judge.example carries credentials (a #fragment, which an API URL never has); keys belong in the environment: name the variable with api_key_env (--judge-api-key-env)
    """
    if not url:
        return url
    try:
        parts = urlsplit(url)
        host = parts.hostname or "the server"
    except ValueError:   # an unclosed [ in the host: say nothing of what follows it
        raise InputError("not a URL (its host cannot be read)", file=file, line=line, field=field) from None
    found = None
    if "@" in parts.netloc:
        found = "user:password@"
    elif parts.fragment:
        found = "a #fragment, which an API URL never has"
    else:
        names = [name for name, value in parse_qsl(parts.query, keep_blank_values=True) if _secret_pair(name, value)]
        if names:
            found = f"query parameter {names[0]}" if not _keyish(names[0]) else "a query parameter"
        elif _secret_path(parts.path):
            found = "a part of its path that looks like a key"
    if found:
        raise InputError(f"the URL of {host} carries credentials ({found}); {hint}", file=file, line=line, field=field)
    return url
