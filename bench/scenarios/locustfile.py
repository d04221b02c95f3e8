"""Issue 34's benchmark workload in Locust (bench/scenarios.sh runs it): the two scenarios of
bench/scenarios.sh's loadgate spec, as two user classes in one Locust process.

- ReadUser (READ_USERS of them, `fixed_count`): GET /api/items, each user at READ_RATE /
  READ_USERS task runs per second (`constant_throughput`), so READ_RATE reads per second in all:
  loadgate's `constant-arrival-rate` scenario `reads`.
- CheckoutUser (the other users, CHECKOUT_VUS): one iteration of the checkout flow per task run,
  at most CHECKOUT_PACING iterations per second each (`constant_throughput`, loadgate's
  `pacing`; with CHECKOUT_PACING 0, one after another without a pause): log in as the next user
  of USERS_CSV (the token from the JSON body, the session cookie into the user's cookie jar),
  GET /api/items/3 with the token, POST /api/cart with the cookie. Each step's status is
  checked (another status is a failure): loadgate's `ramping-vus` scenario `checkout`.

Requests are named (`read`, `login`, `item`, `cart`), so that the stats CSV counts each: the
`cart` count is the checkout iterations that ended.
"""
import csv
import itertools
import os

from locust import constant, constant_throughput, task
from locust.contrib.fasthttp import FastHttpUser

READ_RATE = float(os.environ.get("READ_RATE", "400"))
READ_USERS = int(os.environ.get("READ_USERS", "40"))
CHECKOUT_PACING = float(os.environ.get("CHECKOUT_PACING", "20"))

with open(os.environ["USERS_CSV"], newline="") as f:
    USERS = itertools.cycle([(row["username"], row["password"]) for row in csv.DictReader(f)])


class ReadUser(FastHttpUser):
    fixed_count = READ_USERS
    wait_time = constant_throughput(READ_RATE / READ_USERS)

    @task
    def read(self):
        self.client.get("/api/items", name="read")


class CheckoutUser(FastHttpUser):
    # CHECKOUT_PACING 0: no pause at all, as many iterations as the core allows.
    wait_time = constant_throughput(CHECKOUT_PACING) if CHECKOUT_PACING > 0 else constant(0)

    @task
    def checkout(self):
        user, password = next(USERS)
        with self.client.post("/api/login", json={"user": user, "password": password},
                              name="login", catch_response=True) as login:
            if login.status_code != 200:
                login.failure(f"status {login.status_code}")
                return
            token = login.json()["token"]
        with self.client.get("/api/items/3", headers={"Authorization": f"Bearer {token}"},
                             name="item", catch_response=True) as item:
            if item.status_code != 200:
                item.failure(f"status {item.status_code}")
                return
        with self.client.post("/api/cart", json={"item": 3}, name="cart",
                              catch_response=True) as cart:
            if cart.status_code != 201:
                cart.failure(f"status {cart.status_code}")
