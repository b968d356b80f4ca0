"""The OpenAPI 3.1 document, generated from the route table and the models' JSON Schemas."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from .errors import ErrorAnswer

if TYPE_CHECKING:
    from .routes import Route

REF = "#/components/schemas/{model}"


def _schema(model: type[BaseModel], components: dict[str, Any]) -> dict[str, Any]:
    schema = model.model_json_schema(ref_template=REF, mode="serialization")
    components.update(schema.pop("$defs", {}))
    components[model.__name__] = schema
    return {"$ref": REF.format(model=model.__name__)}


def openapi_document(routes: tuple[Route, ...]) -> dict[str, Any]:
    """Every route with its parameters, body, answer and error shape."""
    components: dict[str, Any] = {}
    error = _schema(ErrorAnswer, components)
    paths: dict[str, dict[str, Any]] = {}
    for route in routes:
        operation: dict[str, Any] = {
            "summary": route.summary,
            "operationId": route.handler.__name__,
        }
        parameters = [
            {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}
            for name in re.findall(r"{(\w+)}", route.path)
        ]
        if route.query is not None:
            for name, field in route.query.model_fields.items():
                parameters.append(
                    {
                        "name": name,
                        "in": "query",
                        "required": False,
                        "description": field.description or name,
                    }
                )
        if parameters:
            operation["parameters"] = parameters
        if route.body is not None:
            operation["requestBody"] = {
                "required": True,
                "content": {"application/json": {"schema": _schema(route.body, components)}},
            }
        responses: dict[str, Any] = {}
        if route.answer is not None:
            schema = _schema(route.answer, components)
            if route.list_answer:
                schema = {"type": "array", "items": schema}
            responses[str(route.status)] = {
                "description": "OK",
                "content": {"application/json": {"schema": schema}},
            }
        else:
            responses[str(route.status)] = {"description": "OK"}
        responses["4XX"] = {
            "description": "Error",
            "content": {"application/json": {"schema": error}},
        }
        operation["responses"] = responses
        if route.write:
            operation["security"] = [{"bearer": []}]
        paths.setdefault(route.path, {})[route.method.lower()] = operation
    return {
        "openapi": "3.1.0",
        "info": {"title": "GGP match server", "version": "1"},
        "paths": paths,
        "components": {
            "schemas": components,
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
    }
