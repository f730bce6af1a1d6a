"""The store registry: create, list, show, update (live), close/reopen, delete."""

from __future__ import annotations

from engram.v1 import gateway_pb2
from fastapi import APIRouter, Request, Response

from gateway.deps import CallerDep, StorePath
from gateway.routes._proto import ProtoOp

router = APIRouter(prefix="/v1/stores", tags=["stores"])

CREATE = ProtoOp(gateway_pb2.CreateStoreRequest, gateway_pb2.StoreInfo, store_field=None)
LIST = ProtoOp(gateway_pb2.ListStoresRequest, gateway_pb2.ListStoresResponse, body=False)
GET = ProtoOp(gateway_pb2.GetStoreRequest, gateway_pb2.StoreInfo, store_field="name", body=False)
UPDATE = ProtoOp(gateway_pb2.UpdateStoreRequest, gateway_pb2.StoreInfo, store_field="name")
DELETE = ProtoOp(
    gateway_pb2.DeleteStoreRequest,
    gateway_pb2.DeleteStoreResponse,
    store_field="name",
    body=False,
    query=("confirm",),
)


@router.post("", **CREATE.route(status_code=201, summary="create a store"))
async def create_store(request: Request, caller: CallerDep) -> Response:
    return await caller.run(CREATE, request, caller.gateway.create_store, status_code=201)


@router.get("", **LIST.route(summary="the stores this token may use"))
async def list_stores(request: Request, caller: CallerDep) -> Response:
    return await caller.run(LIST, request, caller.gateway.list_stores)


@router.get("/{store}", **GET.route(summary="a store's settings and drawer count"))
async def get_store(store: StorePath, request: Request, caller: CallerDep) -> Response:
    return await caller.run(GET, request, caller.gateway.get_store, store=store)


@router.patch("/{store}", **UPDATE.route(summary="change a store (live; open: false closes)"))
async def update_store(store: StorePath, request: Request, caller: CallerDep) -> Response:
    return await caller.run(UPDATE, request, caller.gateway.update_store, store=store)


@router.delete("/{store}", **DELETE.route(summary="delete a store and its data (confirm=true)"))
async def delete_store(store: StorePath, request: Request, caller: CallerDep) -> Response:
    return await caller.run(DELETE, request, caller.gateway.delete_store, store=store)
