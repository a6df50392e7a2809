"""A ``postgresql://`` URL read into what to connect to, which table and columns, which
fusion; and the URL as runs record it (never a password).

``postgresql://USER[:PASSWORD]@HOST[:PORT]/DB?table=groove_chunks&family=rrf&k=60``:

* groove's options: ``table`` (``name`` or ``schema.name``), the fusion (``family``,
  ``k``, ``window``, ``vector_weight``, ``normalizer``), ``ef_search`` (pgvector's
  ``hnsw.ef_search``; default: the window, at most 1000);
* a table groove did not write: its columns ``id``, ``path``, ``heading`` (empty: none),
  ``text`` (a text column) or ``tsvector`` (a stored tsvector), ``embedding``, and
  ``model``, the model that made its embeddings;
* libpq's own keywords (``host``, ``sslmode``, ``service``, ``options``, ...) go to the
  connection as they are; so do libpq's environment variables (``PGPASSWORD``,
  ``PGSSLMODE``, ``PGSERVICE``, ...), which psycopg reads.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from groove.errors import ConfigError, literal
from groove.retrievers.backends import postgres_sql as sql
from groove.retrievers.backends.common import BackendOptions, parse_options, whole_option

#: libpq connection keywords a URL may carry (PostgreSQL's "Parameter Key Words").
LIBPQ_KEYS = frozenset(
    {
        "host", "hostaddr", "port", "dbname", "user", "password", "passfile",
        "channel_binding", "connect_timeout", "options", "application_name",
        "fallback_application_name", "keepalives", "keepalives_idle",
        "keepalives_interval", "keepalives_count", "tcp_user_timeout", "sslmode",
        "sslnegotiation", "sslcompression", "sslcert", "sslkey", "sslpassword",
        "sslcertmode", "sslrootcert", "sslcrl", "sslcrldir", "sslsni",
        "requirepeer", "ssl_min_protocol_version", "ssl_max_protocol_version",
        "krbsrvname", "gsslib", "gssdelegation", "gssencmode", "service",
        "target_session_attrs", "load_balance_hosts", "require_auth",
    }
)  # fmt: skip
#: libpq keywords that decide which database is read, so they stay in the recorded name
#: (the others only say how to reach it, or are secret).
NAMING_KEYS = frozenset({"dbname", "service", "options"})
COLUMN_KEYS = ("id", "path", "heading", "text", "tsvector", "embedding")
OWN_KEYS = ("ef_search", "model", *COLUMN_KEYS)
MAX_EF_SEARCH = 1000  # pgvector's upper bound of hnsw.ef_search


@dataclass(frozen=True)
class Target:
    """What a URL names: the connection, the table's layout, the fusion and pgvector's
    search setting."""

    conninfo: str  # the URL with libpq's keywords only, ``options`` left out
    libpq_options: str | None  # libpq's ``options``, merged with groove's statement limit
    options: BackendOptions
    layout: sql.Layout
    model: str | None  # ``model=``: for a table without groove's meta
    ef_search: int | None

    @property
    def mapped(self) -> bool:
        """Columns or a model given: the URL describes a table groove did not write."""
        return self.model is not None or any(k in self.options.extra for k in COLUMN_KEYS)


def sql_hint() -> str:
    return (
        "write it like postgresql://user@127.0.0.1:5432/db?table=groove_chunks "
        "(a Unix socket: postgresql://user@localhost/db?host=/socket/folder; docs/engines.md)"
    )


def redacted(url: str) -> str:
    """``url`` with any password replaced by ``***`` (in the netloc and the query)."""
    parts = urlsplit(url)
    netloc = parts.netloc
    if parts.password is not None:
        user, _, host = netloc.rpartition("@")
        netloc = f"{user.split(':', 1)[0]}:***@{host}"
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    query = urlencode([(k, "***" if k in ("password", "sslpassword") else v) for k, v in pairs])
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def parse_target(url: str) -> Target:
    """Read ``url``; ConfigError (naming the URL without its password) for a bad one."""
    parts = urlsplit(url)
    shown = redacted(url)
    if parts.scheme not in ("postgresql", "postgres"):
        raise ConfigError(literal(f"{shown!r} is not a postgresql://HOST/DB URL"), sql_hint())
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    libpq = [(k, v) for k, v in pairs if k in LIBPQ_KEYS and k != "options"]
    given = dict(pairs)
    if not parts.hostname and not any(k in given for k in ("host", "hostaddr", "service")):
        raise ConfigError(literal(f"{shown!r} names no host"), sql_hint())
    ours = urlencode([(k, v) for k, v in pairs if k not in LIBPQ_KEYS])
    options = parse_options(ours, "postgresql URL", OWN_KEYS)
    try:
        layout = _layout(options)
    except ValueError as exc:
        raise ConfigError(
            f"postgresql URL: {literal(str(exc))}", "use letters, digits and _ only"
        ) from None
    ef_search = whole_option(options, "ef_search", "postgresql URL")
    if ef_search is not None and ef_search > MAX_EF_SEARCH:
        raise ConfigError(
            f"postgresql URL: ef_search {ef_search} is above pgvector's {MAX_EF_SEARCH}",
            "give ef_search between 1 and 1000",
        )
    conninfo = urlunsplit((parts.scheme, parts.netloc, parts.path, urlencode(libpq), ""))
    model = options.extra.get("model") or None
    return Target(conninfo, given.get("options"), options, layout, model, ef_search)


def _layout(options: BackendOptions) -> sql.Layout:
    table = sql.Table.parse(options.table)
    given = options.extra
    if "text" in given and "tsvector" in given:
        raise ValueError("give text= or tsvector=, not both")
    default = sql.Layout(table)
    text = given.get("text")
    return sql.Layout(
        table,
        id=given.get("id", default.id),
        path=given.get("path", default.path),
        heading=(given["heading"] or None) if "heading" in given else default.heading,
        tsvector=None if text is not None else given.get("tsvector", default.tsvector),
        text=text,
        embedding=given.get("embedding", default.embedding),
    )


def public_name(url: str) -> str:
    """The retriever's recorded name: the URL without password and libpq's connection
    keywords, with groove's options and the keywords that pick the database (``dbname``,
    ``service``, ``options``), sorted. Checks the URL (ConfigError for a bad one)."""
    parse_target(url)
    parts = urlsplit(url)
    user = f"{parts.username}@" if parts.username else ""
    port = f":{parts.port}" if parts.port else ""
    host = parts.hostname or "localhost"
    ours = sorted(
        (k, v)
        for k, v in parse_qsl(parts.query, keep_blank_values=True)
        if k not in LIBPQ_KEYS or k in NAMING_KEYS
    )
    return urlunsplit((parts.scheme, f"{user}{host}{port}", parts.path, urlencode(ours), ""))
