"""Settings: the only module that reads the environment (prefix ``MEMVAULT_``)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
import json
from typing import Annotated, Literal

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"  # every process's log lines (serve, worker, mcp)

EmbedderName = Literal["use", "e5", "e5-onnx", "minilm-onnx", "mlx", "openai", "hash"]
Rail2EmbedderName = Literal["none", "use", "e5", "e5-onnx", "minilm-onnx", "hash"]
RerankerName = Literal["none", "http", "mlx", "fitgate"]
LLMName = Literal["heuristic", "openai", "mlx"]


def _default_data_dir() -> Path:
    return Path.home() / ".local" / "share" / "memvault"


def _default_cache_dir() -> Path:
    return Path.home() / ".cache" / "memvault"


class Settings(BaseSettings):
    """Every tunable of the service. Read once, cached by :func:`get_settings`."""

    model_config = SettingsConfigDict(env_prefix="MEMVAULT_", env_file=None, extra="ignore")

    # --- database -------------------------------------------------------------------------------
    database_url: str | None = Field(
        default=None,
        description="An external PostgreSQL 17 server with pgvector and AGE. Unset: the embedded cluster.",
    )
    service_database_url: str | None = Field(
        default=None,
        description="What the API and the worker log in as: the role memvault_service (not a superuser, no "
        "BYPASSRLS, owner of nothing; migration 0023 creates it). Unset: the database URL above (or the embedded "
        "cluster's) with memvault_service as its user and service_db_password as its password. Migrations, "
        "`memvault db` and the other commands keep the database URL's own role, the tables' owner.",
    )
    service_db_password: SecretStr | None = Field(
        default=None, description="memvault_service's password, for a server that asks for one (the embedded "
        "cluster trusts loopback; the image in docker/ sets it from MEMVAULT_SERVICE_PASSWORD).")
    data_dir: Path = Field(default_factory=_default_data_dir, description="Embedded cluster and caches.")
    db_port: int = Field(default=0, description="Embedded cluster port; 0 picks a free one on first start.")
    db_name: str = "memvault"
    debian_mirror: str = "http://deb.debian.org/debian"
    rootfs_dir: Path | None = Field(
        default=None,
        description="A trixie root filesystem to run the embedded server in (built there if missing), shared by "
        "several data directories; unset: data_dir/rootfs.",
    )
    replica_urls: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="Hot standbys of the database (streaming replicas), comma-separated or a JSON list: recall, "
        "search and the read-only list routes are served by a healthy one (docs/scale.md); writes, the recall log "
        "and access counts go to the primary. The API logs in to each as memvault_service. `memvault db replica add` "
        "sets one up next to the embedded cluster and prints its URL.",
    )
    replica_max_lag_bytes: int = Field(default=16 * 1024 * 1024, ge=0, description="A standby further behind "
                                       "the primary than this (WAL bytes not yet replayed) serves nothing until "
                                       "it catches up.")
    replica_check_s: float = Field(default=2.0, gt=0, description="How often each standby's health and replay "
                                   "position are checked (shown in /health).")
    replica_timeout_s: float = Field(default=2.0, gt=0, description="How long a read waits for a standby's "
                                     "connection before it is served by the primary and the standby is marked "
                                     "down.")
    log_retention_months: dict[str, int] = Field(
        default_factory=lambda: {"recall_log": 12, "audit_log": 0},
        description="Months of each partitioned log kept: older monthly partitions are dropped by the upkeep job "
        "(app/background/log_partitions.py); 0 keeps every month (audit_log's default: the audit trail is "
        "append-only).",
    )
    pool_min_size: int = 1
    pool_max_size: int = 10
    pool_timeout_s: float = Field(default=10.0, description="How long a request waits for a database connection "
                                  "before it is answered 503 with Retry-After (an outage, or every connection busy).")

    # --- models ---------------------------------------------------------------------------------
    embedder: EmbedderName = "use"
    embedder_model_path: Path | None = Field(default=None, description="Local weights for the mlx embedder.")
    embedder_url: str | None = Field(default=None, description="Base URL of an OpenAI-compatible server.")
    embedder_model: str | None = Field(default=None, description="Model name sent to the embeddings server.")
    embedder_dim: int | None = Field(default=None, description="Dimension of the openai embedder's vectors.")
    embedder_timeout_s: float = 10.0
    embedder_max_retries: int = Field(default=2, description="Retries of the openai embedder (5xx, timeouts).")
    embedder_hash_dim: int = Field(default=256, description="Dimension of the hash embedder (unit tests only).")
    embedder_threads: int = Field(default=2, ge=1, le=64, description="Threads one embedding call of the use "
                                  "and e5-onnx embedders runs its micro-batches on (2: both cores of the 2-core machine it is "
                                  "measured on; 1 when many worker processes share few cores).")
    model_cache_dir: Path = Field(default_factory=_default_cache_dir, description="Files built from installed "
                                  "weights, once (the e5-onnx embedder's ONNX graph, ~14 MB, built in about a "
                                  "second); safe to delete.")
    rail2_embedder: Rail2EmbedderName = Field(
        default="e5-onnx",
        description="A second embedding model for a third RRF rail (app/read/rail2.py): the worker embeds each block "
        "with it after the write, and the slow path's recall embeds the question with it too (the fast path does "
        "not: ReadConfig.search.rail2_fast). Default e5-onnx (multilingual-e5-small on onnxruntime; off by itself "
        "when it is the embedder too); 'none': two rails.",
    )
    day_first: bool = Field(
        default=False,
        description="How an ambiguous numeric date is read, in what is written and in questions: false (default), "
        "month first as in the US ('03/04/2023' is 4 March); true, day first as most other places write it (3 "
        "April). A number over 12 is the day either way ('13/04/2023'); dates with a month name, year-first dates "
        "('2023-04-03') and dotted ones ('03.04.2023', always day first) are never ambiguous.",
    )
    reranker: RerankerName = "none"
    reranker_url: str | None = None
    reranker_model: str | None = None
    reranker_model_path: Path | None = None
    reranker_timeout_s: float = 5.0
    reranker_max_retries: int = 1

    llm: LLMName = "heuristic"
    llm_url: str | None = None
    llm_model: str | None = None
    llm_model_path: Path | None = None
    llm_timeout_s: float = 30.0
    llm_max_retries: int = 2
    llm_temperature: float | None = Field(default=None, description="Overrides every task's temperature.")
    llm_json_mode: Literal["json_schema", "json_object", "none"] = Field(
        default="json_schema", description="First response_format tried by the openai LLM (it falls back)."
    )

    model_api_key: SecretStr | None = Field(default=None, description="Bearer key for the OpenAI-compatible servers.")

    dream_judge_llm: Literal["none", "openai", "mlx"] = Field(
        default="none",
        description="The stronger model the dream's conflict judge escalates to when the first verdict is not sure "
        "(app/background/tcr.py); 'none': unsure verdicts go to the review queue.")
    dream_judge_llm_url: str | None = Field(default=None, description="Its OpenAI-compatible server (openai).")
    dream_judge_llm_model: str | None = Field(default=None, description="Its model name (openai).")
    dream_judge_llm_model_path: Path | None = Field(default=None, description="Its local weights (mlx).")

    breaker_failures: int = 3
    breaker_open_s: float = 600.0

    # --- service --------------------------------------------------------------------------------
    api_key: SecretStr | None = Field(
        default=None,
        description="memvault API key (mvk_...) that `memvault mcp` and `memvault hook` act with (or --key).",
    )
    local_key_file: str = Field(default="api_key", description="`memvault serve --local-key` keeps its admin key "
                                "in this file of the data directory (mode 0600).")
    host: str = "127.0.0.1"
    port: int = 8420
    model_threads: int = Field(default=2, ge=1, le=64, description="Threads that run model calls (embedding, "
                               "local rerankers and LLMs) off the event loop (app/models/calls.py); one per core "
                               "the models may use: the 2-core reference machine runs 2.")
    api_url: str | None = Field(default=None, description="The running service `memvault hook` talks to (and "
                                "app.client's default): http://HOST:PORT; default http://127.0.0.1:<port>. When "
                                "nothing answers there, a hook does its work in its own process.")
    api_workers: int = Field(default=1, ge=1, le=64, description="API processes of `memvault serve` (--workers): "
                             "past 1, each is a process of its own on the same port and the job worker is another; "
                             "Python runs one core per process (docs/benchmarks.md, the load section).")
    worker_concurrency: int = 2
    worker_heartbeat_s: float = Field(default=10.0, description="How often a worker records that it is alive.")
    worker_stalled_s: float = Field(default=30.0, description="A worker silent this long is taken for dead: its "
                                    "running jobs are queued again (app/background/stalled.py).")
    worker_backoff_s: float = Field(default=0.5, description="The job worker lost its database (a restart, an "
                                    "outage): the first pause before it starts again; doubled at each failure...")
    worker_backoff_max_s: float = Field(default=10.0, description="...up to this (app/runner.py, _worker_loop).")
    health_queue_stall_s: float = Field(default=300.0, description="/health answers 503 when jobs have waited this "
                                        "long and none started meanwhile (the queue is stalled).")
    max_content_chars: int = 20_000
    max_batch_items: int = 500
    max_body_bytes: int = Field(default=12_000_000, description="Largest request body (413 beyond); a full batch of "
                                "max_batch_items memories of max_content_chars fits.")
    max_import_bytes: int = Field(default=2_000_000_000, description="Largest body of POST /v1/vaults/{v}/import.")
    session_idle_close_s: int = 1800
    # Failed API keys (malformed, unknown, wrong, revoked) allowed per window before 429 + Retry-After
    # (app.auth_limit, whose docstring says why these three). Ten wrong secrets a minute at one key id from one
    # address stops guessing and leaves a person who mistyped room; an address gets more (several users behind one
    # NAT); a key id from all addresses together gets a ceiling, which never blocks an address that has used the
    # key successfully within auth_known_address_s, so nobody who merely knows a key id can lock its owner out.
    auth_failures_per_key: int = Field(default=10, ge=1, description="Failed keys per window at one key id from "
                                       "one client address.")
    auth_failures_per_key_all: int = Field(default=100, ge=1, description="Failed keys per window at one key id "
                                           "from all addresses together (not applied to an address that used the "
                                           "key successfully within auth_known_address_s).")
    auth_failures_per_address: int = Field(default=50, ge=1)
    auth_failure_window_s: float = Field(default=60.0, gt=0)
    auth_known_address_s: float = Field(default=86_400.0, ge=0, description="How long a successful key from an "
                                        "address exempts that address from the key id's failure limits.")
    trusted_proxies: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="Addresses or CIDR blocks of reverse proxies in front of the API (comma- or space-separated, or "
        "a JSON list; default none). Only when a request's peer is one of them is X-Forwarded-For read: the "
        "right-most address in it that is not a trusted proxy is the client's (failed-key limits, logs). "
        "Otherwise the header is ignored: anyone can send it.",
    )

    @field_validator("replica_urls", "trusted_proxies", mode="before")
    @classmethod
    def _split_urls(cls, value: object) -> object:
        """``MEMVAULT_REPLICA_URLS``, ``MEMVAULT_TRUSTED_PROXIES``: a JSON list, or items separated by commas or
        spaces."""
        if isinstance(value, str):
            text = value.strip()
            return json.loads(text) if text.startswith("[") else [u for u in text.replace(",", " ").split() if u]
        return value

    @field_validator("trusted_proxies")
    @classmethod
    def _proxies_are_networks(cls, value: list[str]) -> list[str]:
        import ipaddress

        for item in value:
            try:
                ipaddress.ip_network(item, strict=False)
            except ValueError:
                raise ValueError(f"MEMVAULT_TRUSTED_PROXIES: {item!r} is not an IP address or CIDR block "
                                 "(e.g. 10.0.0.5 or 10.0.0.0/8)") from None
        return value

    @property
    def embedded(self) -> bool:
        return self.database_url is None


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings()


class BenchSettings(BaseSettings):
    """The benchmarks' knobs (``memvault bench``), apart from the service's :class:`Settings`: the service never
    reads them, and a change to them is no change to the service. They live in this module because it is the only
    one that reads the environment (STYLE 11), under the same variable names as before (``MEMVAULT_BENCH_DB``,
    ``MEMVAULT_BENCH_GRAPH``); the benchmarks read them where they use them
    (app/bench/runtime.py: ``bench_settings()``); nothing caches them."""

    model_config = SettingsConfigDict(env_prefix="MEMVAULT_", env_file=None, extra="ignore")

    bench_db: str = Field(
        default="memvault_bench",
        description="The benchmarks' own database on the configured server (created and migrated if missing); "
        "two checkouts with different migrations benchmark side by side with a database each.",
    )
    bench_graph: bool = Field(
        default=False,
        description="Benchmarks build each vault's knowledge graph and its centrality after ingest, as the worker "
        "does after each write (build_graph, graph_centrality); off: the graph stays empty, as without a worker.",
    )

