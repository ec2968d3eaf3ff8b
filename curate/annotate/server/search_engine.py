"""An argilla-server search engine that answers from the server's own SQLite database.

argilla-server 2.8 picks its search engine by the name in `ARGILLA_SEARCH_ENGINE` from
`SearchEngine.registered_classes`. `register()` adds `curate-sqlite`, which needs no Elasticsearch:
the index hooks are no-ops (the database already holds everything) and every query is translated
into SQL over the `records`, `responses` and `suggestions` tables, with SQLite's JSON functions
(`json_extract`, `json_type`, `json_each`) for fields, metadata, suggestion and response values.
It answers what the Elasticsearch engine of argilla_server.search_engine.commons answers, including
the per-user deterministic shuffle of an annotator's queue. Vector search is not supported.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from datetime import datetime, timezone
from typing import Any, Iterable, List, Optional, Union
from uuid import UUID

ENGINE_NAME = "curate-sqlite"

# Bound by `register()`, in the server process only: importing argilla_server builds its whole web
# app (copying 14 MB of static files to a temp dir), and neither it nor SQLAlchemy is installed
# without the `argilla` extra, so importing this module (pytest's doctest collection does) stays free.
sa = database = enums = models = base = errors = None


def register() -> type:
    """Returns the engine class, registered in argilla-server's registry as `curate-sqlite`."""
    import sqlalchemy
    from argilla_server import database as _database, enums as _enums, models as _models
    from argilla_server.errors import future as _errors
    from argilla_server.search_engine import base as _base

    globals().update(sa=sqlalchemy, database=_database, enums=_enums, models=_models, base=_base, errors=_errors)
    engine = type("SQLiteSearchEngine", (_Engine, _base.SearchEngine), {"__doc__": _Engine.__doc__})
    return _base.SearchEngine.register(ENGINE_NAME)(engine)


def _path(*keys: str) -> str:
    """Returns the SQLite JSON path `$."k1"."k2"` for the keys."""
    return "$" + "".join('."' + key.replace('"', '\\"') + '"' for key in keys)


def _text(expression):
    """Returns the expression cast to text (SQLite: 2 -> '2', 'a' -> 'a')."""
    return sa.cast(expression, sa.String)


def _json_in(column, path: str, values: List[str]):
    """Returns a condition: the JSON value at `path` (or any element, for an array) is one of `values`."""
    kind = sa.func.json_type(column, path)
    each = sa.func.json_each(column, path).table_valued("value").alias("each_value")
    return sa.or_(
        sa.and_(kind != "array", _text(sa.func.json_extract(column, path)).in_(values)),
        sa.and_(kind == "array",
                sa.exists(sa.select(sa.literal(1)).select_from(each).where(_text(each.c.value).in_(values)))),
    )


def _range(expression, ge: Any, le: Any):
    """Returns a condition: `ge <= expression <= le` (either bound may be None)."""
    conditions = [expression.is_not(None)]
    if ge is not None:
        conditions.append(expression >= ge)
    if le is not None:
        conditions.append(expression <= le)
    return sa.and_(*conditions)


def _as_datetime(value: Union[float, str, None]) -> Optional[datetime]:
    """Returns a naive UTC datetime from an ISO string or epoch milliseconds (as Elasticsearch reads them)."""
    if value is None:
        return None
    if isinstance(value, (int, float)):
        return datetime.fromtimestamp(value / 1000, tz=timezone.utc).replace(tzinfo=None)
    parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    return parsed.astimezone(timezone.utc).replace(tzinfo=None) if parsed.tzinfo else parsed


def _enum_values(enum, values: Iterable[str]) -> list:
    """Returns the members of `enum` named in `values`, ignoring unknown names."""
    return [enum(value) for value in values if value in enum.__members__.values()]


def _value_condition(column, path: str, filter):
    """Returns the terms or range condition of `filter` on the JSON value at `path` of `column`."""
    if isinstance(filter, base.TermsFilter):
        return _json_in(column, path, [str(value) for value in filter.values])
    if isinstance(filter, base.RangeFilter):
        return _range(sa.func.json_extract(column, path), filter.ge, filter.le)
    raise ValueError(f"Cannot process filter {filter}")


class _Query:
    """Translates argilla-server's engine filters and orders into SQL over one dataset's records."""

    def __init__(self, fields: list, metadata: list):
        self.fields = fields
        self.metadata_types = {prop.name: prop.type for prop in metadata}

    def text(self, query) -> Any:
        """Returns a condition: every word of the query occurs (case-insensitively) in some searched field."""
        if isinstance(query, str):
            query = base.TextQuery(q=query)
        fields = [f for f in self.fields if not f.is_image and (query.field is None or f.name == query.field)]
        text = query.q.strip()
        if len(text) > 1 and text[0] == text[-1] == '"':
            words = [text[1:-1]]
        else:
            words = [word for word in text.split() if word not in {"+", "|", "-"}]
        if not words:
            return sa.true()
        values = [sa.func.lower(_text(sa.func.json_extract(models.Record.fields, _path(f.name)))) for f in fields]
        if not values:
            return sa.false()
        return sa.and_(*(sa.or_(*(sa.func.instr(value, word.lower()) > 0 for value in values)) for word in words))

    def filter(self, filter) -> Any:
        """Returns the SQL condition for an engine filter (AND, terms or range, of any scope)."""
        if isinstance(filter, base.AndFilter):
            return sa.and_(sa.true(), *(self.filter(f) for f in filter.filters))
        scope = filter.scope
        if isinstance(scope, base.RecordFilterScope):
            return self._record(scope.property, filter)
        if isinstance(scope, base.MetadataFilterScope):
            return self._metadata(scope.metadata_property, filter)
        if isinstance(scope, base.SuggestionFilterScope):
            return self._suggestion(scope, filter)
        if isinstance(scope, base.ResponseFilterScope):
            return self._response(scope, filter)
        raise ValueError(f"Cannot process filter scope {scope}")

    def _record(self, prop: str, filter) -> Any:
        column = getattr(models.Record, prop)
        if isinstance(filter, base.RangeFilter):
            if prop in ("inserted_at", "updated_at"):
                return _range(column, _as_datetime(filter.ge), _as_datetime(filter.le))
            return _range(column, filter.ge, filter.le)
        if prop == "status":
            return column.in_(_enum_values(enums.RecordStatus, filter.values))
        if prop == "id":
            return column.in_([UUID(str(value)) for value in filter.values])
        return column.in_(filter.values)

    def _metadata(self, name: str, filter) -> Any:
        column = models.Record.metadata_
        if isinstance(filter, base.TermsFilter) and self.metadata_types.get(name) != enums.MetadataPropertyType.terms:
            return sa.func.json_extract(column, _path(name)).in_([float(value) for value in filter.values])
        return _value_condition(column, _path(name), filter)

    def _suggestion(self, scope, filter) -> Any:
        Suggestion = models.Suggestion
        if scope.property in ("value", "score", None):
            column = Suggestion.score if scope.property == "score" else Suggestion.value
            condition = _value_condition(column, "$", filter)
        elif scope.property == "type" and isinstance(filter, base.TermsFilter):
            condition = Suggestion.type.in_(_enum_values(enums.SuggestionType, filter.values))
        elif scope.property == "agent" and isinstance(filter, base.TermsFilter):
            condition = Suggestion.agent.in_(filter.values)
        else:
            raise ValueError(f"Cannot process filter {filter}")
        return sa.exists(
            sa.select(sa.literal(1)).select_from(Suggestion)
            .join(models.Question, Suggestion.question_id == models.Question.id)
            .where(Suggestion.record_id == models.Record.id, models.Question.name == scope.question, condition))

    def _responses(self, user, *conditions) -> Any:
        """Returns a condition: the record has a response (by `user` if given) meeting the conditions."""
        Response = models.Response
        if user is not None:
            conditions = (*conditions, Response.user_id == user.id)
        return sa.exists(sa.select(sa.literal(1)).select_from(Response)
                         .where(Response.record_id == models.Record.id, *conditions))

    def _response(self, scope, filter) -> Any:
        if scope.question:
            path = _path(scope.question, "value")
            return self._responses(scope.user, _value_condition(models.Response.values, path, filter))
        if scope.property != "status" or not isinstance(filter, base.TermsFilter):
            raise ValueError(f"Cannot process filter scope {scope}")
        conditions = []
        if enums.ResponseStatusFilter.pending in filter.values:  # no response (by the user) at all
            conditions.append(~self._responses(scope.user))
        statuses = _enum_values(enums.ResponseStatus, filter.values)
        if statuses:
            conditions.append(self._responses(scope.user, models.Response.status.in_(statuses)))
        return sa.or_(sa.false(), *conditions)

    def order(self, order) -> Any:
        """Returns the ORDER BY term for an engine order; missing values sort last, as in Elasticsearch."""
        scope, Record, Suggestion, Response = order.scope, models.Record, models.Suggestion, models.Response
        if isinstance(scope, base.RecordFilterScope):
            expression = getattr(Record, scope.property)
        elif isinstance(scope, base.MetadataFilterScope):
            expression = sa.func.json_extract(Record.metadata_, _path(scope.metadata_property))
        elif isinstance(scope, base.SuggestionFilterScope):
            column = {"value": sa.func.json_extract(Suggestion.value, "$"), "agent": Suggestion.agent,
                      "score": sa.func.json_extract(Suggestion.score, "$"), "type": Suggestion.type}
            expression = (sa.select(column[scope.property or "value"])
                          .join(models.Question, Suggestion.question_id == models.Question.id)
                          .where(Suggestion.record_id == Record.id, models.Question.name == scope.question)
                          .limit(1).scalar_subquery())
        elif isinstance(scope, base.ResponseFilterScope):
            value = (sa.func.avg(sa.func.json_extract(Response.values, _path(scope.question, "value")))
                     if scope.question else sa.func.min(Response.status))
            where = [Response.record_id == Record.id] + ([Response.user_id == scope.user.id] if scope.user else [])
            expression = sa.select(value).where(*where).scalar_subquery()
        else:
            raise ValueError(f"Cannot process order scope {scope}")
        ordered = expression.desc() if order.order == enums.SortOrder.desc else expression.asc()
        return ordered.nulls_last()


def _user_rank(user_id: Any, record_id: UUID) -> bytes:
    """Returns a per-user, deterministic pseudo-random sort key for a record."""
    return hashlib.sha256(f"{user_id}:{record_id}".encode()).digest()


class _Engine:
    """Answers searches, progress and metrics from the server's database; indexing is a no-op.

    `register()` combines it with argilla-server's `SearchEngine` base class."""

    @classmethod
    async def new_instance(cls) -> "_Engine":
        """Returns a new engine (it holds no connection; each call opens a short session)."""
        return cls()

    async def close(self):
        """Returns None; nothing to close."""

    async def ping(self) -> bool:
        """Returns True when the database answers."""
        async with database.AsyncSessionLocal() as db:
            return (await db.scalar(sa.select(sa.literal(1)))) == 1

    async def info(self) -> dict:
        """Returns a description of the engine for /api/v1/status."""
        return {"engine": ENGINE_NAME, "backend": "argilla-server database (SQL)", "vector_search": False}

    # The database is the index: the hooks the Elasticsearch engine needs have nothing to do here.
    async def create_index(self, dataset):
        """Returns None (no index to create)."""

    async def delete_index(self, dataset):
        """Returns None (no index to delete)."""

    async def configure_metadata_property(self, dataset, metadata_property):
        """Returns None (no mapping to configure)."""

    async def configure_index_vectors(self, vector_settings):
        """Returns None (vectors stay in the database; similarity search is not supported)."""

    async def index_records(self, dataset, records: Iterable):
        """Returns None (records are read from the database)."""

    async def partial_record_update(self, record, **update):
        """Returns None (records are read from the database)."""

    async def delete_records(self, dataset, records: Iterable):
        """Returns None (records are read from the database)."""

    async def update_record_response(self, response):
        """Returns None (responses are read from the database)."""

    async def delete_record_response(self, response):
        """Returns None (responses are read from the database)."""

    async def update_record_suggestion(self, suggestion):
        """Returns None (suggestions are read from the database)."""

    async def delete_record_suggestion(self, suggestion):
        """Returns None (suggestions are read from the database)."""

    async def get_dataset_progress(self, dataset) -> dict:
        """Returns {"total", "pending", "completed"} record counts ({} for a draft dataset)."""
        if dataset.is_draft:
            return {}
        Record = models.Record
        async with database.AsyncSessionLocal() as db:
            rows = (await db.execute(sa.select(Record.status, sa.func.count())
                                     .where(Record.dataset_id == dataset.id).group_by(Record.status))).all()
        counts = {enums.RecordStatus(status).value: count for status, count in rows}
        return {"total": sum(counts.values()), **counts}

    async def get_dataset_user_progress(self, dataset, user) -> dict:
        """Returns {"total", "submitted", "discarded", "draft"} counts of the user's responses in the dataset."""
        if dataset.is_draft:
            return {}
        Record, Response = models.Record, models.Response
        async with database.AsyncSessionLocal() as db:
            rows = (await db.execute(
                sa.select(Response.status, sa.func.count()).join(Record, Response.record_id == Record.id)
                .where(Record.dataset_id == dataset.id, Response.user_id == user.id)
                .group_by(Response.status))).all()
        counts = {enums.ResponseStatus(status).value: count for status, count in rows}
        return {"total": sum(counts.values()), **counts}

    async def search(self, dataset, query=None, filter=None, sort: Optional[list] = None, offset: int = 0,
                     limit: int = 100, user_id: Optional[UUID] = None):
        """Returns the SearchResponses: ids of one page of matching records and the total number of matches.

        Without `sort`, records come in insertion order, or, when `user_id` is given (an annotator's
        queue in the web UI), in a pseudo-random order fixed per user, as the Elasticsearch engine does.
        """
        Record = models.Record
        async with database.AsyncSessionLocal() as db:
            fields = (await db.scalars(sa.select(models.Field).where(models.Field.dataset_id == dataset.id))).all()
            metadata = (await db.scalars(sa.select(models.MetadataProperty)
                                         .where(models.MetadataProperty.dataset_id == dataset.id))).all()
            builder = _Query(list(fields), list(metadata))
            where = [Record.dataset_id == dataset.id]
            if query is not None:
                where.append(builder.text(query))
            if filter is not None:
                where.append(builder.filter(filter))
            total = await db.scalar(sa.select(sa.func.count()).select_from(Record).where(*where))
            if not sort and user_id is not None:
                ids = (await db.scalars(sa.select(Record.id).where(*where))).all()
                ids = sorted(ids, key=lambda record_id: _user_rank(user_id, record_id))[offset:offset + limit]
            else:
                order = [builder.order(o) for o in sort or []] + [Record.inserted_at.asc(), Record.id.asc()]
                ids = (await db.scalars(sa.select(Record.id).where(*where).order_by(*order)
                                        .offset(offset).limit(limit))).all()
        score = None if sort else 1.0
        return base.SearchResponses(items=[base.SearchResponseItem(record_id=i, score=score) for i in ids],
                                    total=total)

    async def compute_metrics_for(self, metadata_property):
        """Returns term counts (terms properties) or min/max (integer and float properties) over the dataset."""
        Record, kind = models.Record, metadata_property.type
        path = _path(metadata_property.name)
        value = sa.func.json_extract(Record.metadata_, path)
        in_dataset = Record.dataset_id == metadata_property.dataset_id
        async with database.AsyncSessionLocal() as db:
            if kind == enums.MetadataPropertyType.terms:
                rows = (await db.execute(sa.select(value, sa.func.json_type(Record.metadata_, path))
                                         .where(in_dataset, value.is_not(None)))).all()
            else:
                low, high = (await db.execute(sa.select(sa.func.min(value), sa.func.max(value))
                                              .where(in_dataset))).one()
        if kind == enums.MetadataPropertyType.integer:
            return base.IntegerMetadataMetrics(min=low, max=high)
        if kind == enums.MetadataPropertyType.float:
            return base.FloatMetadataMetrics(min=low, max=high)
        counts: Counter = Counter()
        for item, json_kind in rows:
            counts.update([str(v) for v in json.loads(item)] if json_kind == "array" else [str(item)])
        return base.TermsMetrics(total=sum(counts.values()), values=[
            base.TermsMetrics.TermCount(term=term, count=count) for term, count in counts.most_common()])

    async def similarity_search(self, dataset, vector_settings, value=None, record=None, query=None, filter=None,
                                max_results: int = 100, order=None, threshold: Optional[float] = None):
        """Never returns: similarity (vector) search needs Elasticsearch or OpenSearch (the server answers 422)."""
        unsupported = type("VectorSearchNotSupported", (errors.UnprocessableEntityError, NotImplementedError), {})
        raise unsupported(
            f"Vector similarity search is not supported by the '{ENGINE_NAME}' search engine of the local "
            "curate Argilla server; use a deployment with Elasticsearch or OpenSearch for vector search.")
