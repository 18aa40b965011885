"""The models against services/api/openapi.json: every dataclass has exactly its schema's
properties, required where the schema requires them, of the schema's types; every object
schema of the document has a model; and the client's API_VERSION is the document's."""

import dataclasses
import json
import sys
import typing
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import trawl_client  # noqa: E402
from trawl_client import models  # noqa: E402

DOCUMENT = Path(__file__).resolve().parents[3] / "services" / "api" / "openapi.json"

# Each model and the schema it mirrors, where the names differ or the model is not in
# components.schemas by name.
SCHEMA_OF = {models.Question: "QuestionIn"}
# Schemas that are strings (enumerations, or a pattern's): a `str` field stands for them.
ENUMS = {"BatchEventKind", "ProviderName", "ReportType", "DomainName", "HttpUrl"}


def load() -> dict:
    with open(DOCUMENT, encoding="utf-8") as f:
        return json.load(f)


def all_models():
    return [m for m in vars(models).values()
            if isinstance(m, type) and dataclasses.is_dataclass(m) and issubclass(m, models.Model)]


class Schemas(unittest.TestCase):
    doc: dict

    @classmethod
    def setUpClass(cls):
        cls.doc = load()

    def resolve(self, schema: dict) -> dict:
        while "$ref" in schema:
            name = schema["$ref"].rsplit("/", 1)[-1]
            schema = self.doc["components"]["schemas"][name]
        return schema

    def batch_list_schema(self):
        """The schema of `GET /v1/batches`' answer, or None while the document lacks it."""
        get = self.doc["paths"].get("/v1/batches", {}).get("get")
        if get is None:
            return None
        return get["responses"]["200"]["content"]["application/json"]["schema"]

    def check_type(self, where: str, hint, schema: dict, required: bool) -> None:
        """`hint` (a field's annotation) stands for `schema`: nullable exactly when the schema
        allows null, or the field is optional; then the base types line up."""
        if "oneOf" in schema:  # `null` or a $ref, as utoipa writes an optional enum
            variants = [v for v in schema["oneOf"] if v.get("type") != "null"]
            self.assertEqual(len(variants), 1, where)
            schema = {**variants[0], "type": [self.resolve(variants[0]).get("type"), "null"]}
        types = schema.get("type")
        types = types if isinstance(types, list) else [types]
        optional = typing.get_origin(hint) is typing.Union
        nullable = "null" in types or not schema  # `{}` (any JSON) admits null
        if nullable:
            self.assertTrue(optional or hint is typing.Any, f"{where}: the schema allows null")
        elif optional:
            self.assertFalse(required, f"{where}: Optional but required and never null")
        if optional:
            hint = next(a for a in typing.get_args(hint) if a is not type(None))
        base = [t for t in types if t not in ("null", None)]
        if "$ref" in schema and not base:
            name = schema["$ref"].rsplit("/", 1)[-1]
            if name in ENUMS:
                self.assertIs(hint, str, where)
            else:
                self.assertTrue(dataclasses.is_dataclass(hint), where)
                self.assertEqual(SCHEMA_OF.get(hint, hint.__name__), name, where)
            return
        if not base:
            self.assertIs(hint, typing.Any, f"{where}: the schema is any JSON")
            return
        self.assertEqual(len(base), 1, where)
        kind, origin, args = base[0], typing.get_origin(hint), typing.get_args(hint)
        if kind == "array":
            self.assertIs(origin, list, where)
            self.check_type(f"{where}[]", args[0], schema["items"], True)
        elif kind == "object":
            self.assertIs(origin, dict, where)
            self.assertIs(args[0], str, where)
            values = schema.get("additionalProperties")
            if isinstance(values, dict):
                self.check_type(f"{where}{{}}", args[1], values, True)
            else:
                self.assertIs(args[1], typing.Any, f"{where}: free-form object")
        else:
            expected = {"string": str, "integer": int, "number": float, "boolean": bool}[kind]
            self.assertIs(hint, expected, where)

    def check_model(self, model, schema: dict) -> None:
        schema = self.resolve(schema)
        properties, required = schema.get("properties", {}), set(schema.get("required", []))
        fields = {f.name: f for f in dataclasses.fields(model)}
        self.assertEqual(set(fields), set(properties), f"{model.__name__}'s fields")
        hints = typing.get_type_hints(model)
        for name, f in fields.items():
            has_default = (f.default is not dataclasses.MISSING
                           or f.default_factory is not dataclasses.MISSING)
            where = f"{model.__name__}.{name}"
            self.assertEqual(not has_default, name in required, f"{where}: required-ness")
            self.check_type(where, hints[name], properties[name], name in required)

    def test_every_model_matches_its_schema(self):
        schemas = self.doc["components"]["schemas"]
        for model in all_models():
            if model is models.BatchPage:
                continue  # test_batch_list_matches_its_schema
            with self.subTest(model=model.__name__):
                name = SCHEMA_OF.get(model, model.__name__)
                self.assertIn(name, schemas, "no schema of that name in the document")
                self.check_model(model, {"$ref": f"#/components/schemas/{name}"})

    def test_batch_list_matches_its_schema(self):
        schema = self.batch_list_schema()
        if schema is None:
            self.skipTest("GET /v1/batches is not in openapi.json yet")
        self.check_model(models.BatchPage, schema)

    def modelled(self) -> set:
        """The schemas the models stand for (BatchPage: whatever `GET /v1/batches` answers)."""
        names = {SCHEMA_OF.get(m, m.__name__) for m in all_models()}
        listing = self.batch_list_schema() or {}
        if "$ref" in listing:
            names.add(listing["$ref"].rsplit("/", 1)[-1])
        return names

    def test_every_object_schema_has_a_model(self):
        modelled = self.modelled()
        for name in self.doc["components"]["schemas"]:
            if name not in ENUMS:
                self.assertIn(name, modelled, f"schema {name} has no model in trawl_client")

    def test_the_client_is_built_for_the_documents_version(self):
        self.assertEqual(
            trawl_client.API_VERSION, self.doc["info"]["version"],
            "the API's version changed: check the client against it, then update API_VERSION")

    def test_a_model_for_every_operation_answer(self):
        """Each JSON answer of the document is a model's schema (or a work product's bytes)."""
        modelled = self.modelled()
        for path, item in self.doc["paths"].items():
            for method, op in item.items():
                for status, response in op["responses"].items():
                    if "$ref" in response:
                        response = self.doc["components"]["responses"][
                            response["$ref"].rsplit("/", 1)[-1]]
                    for kind, content in response.get("content", {}).items():
                        ref = content.get("schema", {}).get("$ref")
                        if ref:
                            with self.subTest(op=f"{method} {path} {status} {kind}"):
                                self.assertIn(ref.rsplit("/", 1)[-1], modelled)


class Decoding(unittest.TestCase):
    STATUS = {"batch_id": "b", "created_at": "2025-01-01T00:00:00.123456789Z", "total": 2,
              "started": 1, "finished": 1, "by_status": {"done": 1}, "cancelled": False,
              "done": False, "cost_usd": 0, "unused_sources": {}}

    def test_unknown_fields_are_ignored(self):
        status = models.BatchStatus.from_json({**self.STATUS, "new_field": [1, 2]})
        self.assertEqual((status.total, status.cost_usd), (2, 0.0))
        self.assertIsInstance(status.cost_usd, float)

    def test_a_missing_required_field_is_named(self):
        value = dict(self.STATUS)
        del value["finished"]
        with self.assertRaisesRegex(trawl_client.TrawlDecodeError, "BatchStatus has no 'finished'"):
            models.BatchStatus.from_json(value)
        with self.assertRaises(ValueError):  # also a ValueError
            models.BatchStatus.from_json(value)

    def test_wrong_types_are_named_with_their_path(self):
        for bad, where in [
            ({**self.STATUS, "total": "2"}, r"BatchStatus\.total is \"2\", expected an integer"),
            ({**self.STATUS, "done": 1}, r"BatchStatus\.done is 1, expected a boolean"),
            ({**self.STATUS, "total": True}, r"BatchStatus\.total is true"),
            ({**self.STATUS, "by_status": {"done": None}}, r"BatchStatus\.by_status\.done is null"),
            ([], r"BatchStatus is \[\], expected an object"),
        ]:
            with self.subTest(where=where), self.assertRaisesRegex(
                    trawl_client.TrawlDecodeError, where):
                models.BatchStatus.from_json(bad)
        created = {"batch_id": "b", "created_at": "t", "jobs": [{"job_id": "j", "id": "1"}]}
        with self.assertRaisesRegex(trawl_client.TrawlDecodeError,
                                    r"BatchCreated\.jobs\[0\] has no 'query'"):
            models.BatchCreated.from_json(created)

    def test_nullable_and_absent_optional_fields(self):
        line = {"id": "1", "metadata": {}, "job_id": "j", "query": "q", "status": "pending",
                "sources": None, "report": None, "cost_usd": None}
        result = models.JobResult.from_json(line)
        self.assertEqual((result.sources, result.report, result.work_products), (None, None, None))
        with self.assertRaisesRegex(trawl_client.TrawlDecodeError, "has no 'sources'"):
            models.JobResult.from_json({k: v for k, v in line.items() if k != "sources"})

    def test_events_carry_a_status(self):
        event = models.BatchEvent(event="progress", data=json.dumps(self.STATUS))
        self.assertEqual(event.status().finished, 1)
        with self.assertRaises(trawl_client.TrawlDecodeError):
            models.BatchEvent(event="error", data="the store did not answer").status()

    def test_requests_leave_out_what_is_unset(self):
        q = models.Question(query="q", options=models.JobOptions(max_urls=3))
        self.assertEqual(q.to_json(), {"query": "q", "options": {"max_urls": 3}})


if __name__ == "__main__":
    unittest.main()
