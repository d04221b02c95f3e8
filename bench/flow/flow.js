// The issue-16 benchmark flow in k6 (bench/flow/run.sh runs it): log in (the token from the
// JSON body; the session cookie from Set-Cookie, kept in the virtual user's cookie jar), open
// an item with the token, add it to the cart with the cookie. Users come from the same CSV as
// loadgate's spec, handed out in turn. BASE_URL is the `loadgate serve` to load.
import http from 'k6/http';
import { check } from 'k6';
import { SharedArray } from 'k6/data';

const BASE = __ENV.BASE_URL;
const users = new SharedArray('users', () =>
  open(__ENV.USERS).split('\n').slice(1).filter((line) => line).map((line) => line.split(',')));

export const options = {
  vus: Number(__ENV.VUS),
  duration: __ENV.DURATION,
};

const json = { headers: { 'Content-Type': 'application/json' } };

export default function () {
  const [user, password] = users[(__ITER * options.vus + __VU) % users.length];
  const login = http.post(`${BASE}/api/login`, JSON.stringify({ user, password }), json);
  const token = login.json('token');
  check(login, {
    'login 200': (r) => r.status === 200,
    'session cookie': (r) => r.cookies.session !== undefined,
  });
  const item = http.get(`${BASE}/api/items/3`, {
    headers: { Authorization: `Bearer ${token}` },
    responseType: 'none',
  });
  check(item, { 'item 200': (r) => r.status === 200 });
  // No token: the session cookie from the jar logs us in.
  const cart = http.post(`${BASE}/api/cart`, '{"item": 3}', { ...json, responseType: 'none' });
  check(cart, { 'cart 201': (r) => r.status === 201 });
}
