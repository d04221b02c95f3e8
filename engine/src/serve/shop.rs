//! The built-in target's stateful API under `/api/` (see the [module documentation](super)): a
//! login that hands out a token and a session cookie, a list of items, an item by id behind the
//! token or the cookie, and a cart per session. It exists so that flows (multi-step journeys
//! with extracted values and cookies) have something real to run against, in the examples, the
//! tests and the benchmark.
//!
//! State lives in memory and is bounded: at most [`MAX_SESSIONS`] sessions (each with its cart
//! of at most [`MAX_CART`] items), spread over [`SHARDS`] shards by their random key, each shard
//! behind its own `RwLock`, so that the item path (a lookup under a read lock) never waits for
//! a login elsewhere. When a shard is full, a login evicts that shard's oldest session.
//! Response bodies that do not depend on the session (the list, each item) are built once.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, RwLock};

use http_body_util::{BodyExt as _, Limited};
use hyper::body::{Body, Bytes};
use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use serde::Deserialize;
use serde_json::json;

use super::body::{BoxError, ResponseBody};

/// The most sessions (and carts) kept at once; a login past it evicts an old one.
pub(super) const MAX_SESSIONS: usize = 10_000;

/// The shards the sessions are spread over (by the low bits of their random key), each with
/// `MAX_SESSIONS / SHARDS` sessions at most.
pub(super) const SHARDS: usize = 16;

/// The most items a cart holds; adding one more drops the oldest.
pub(super) const MAX_CART: usize = 100;

/// The items on sale: ids 1..=`ITEMS`.
const ITEMS: u32 = 20;

/// The largest request body the API reads, in bytes; a larger one gets `413`.
const MAX_REQUEST_BODY: usize = 4096;

/// The longest user name a login accepts, in bytes.
const MAX_USER_LEN: usize = 64;

/// The name of the session cookie.
const COOKIE: &str = "session";

/// The names of the items, id 1 first.
const NAMES: [&str; ITEMS as usize] = [
    "anvil", "bucket", "candle", "drill", "easel", "funnel", "globe", "hammock", "inkpot",
    "jigsaw", "kettle", "ladle", "mallet", "needle", "oar", "pulley", "quill", "rope", "sieve",
    "trowel",
];

/// The price of item `id`, in currency units: 2.0 plus 2.5 per id (item 3 costs 9.5).
fn price(id: u32) -> f64 {
    2.0 + 2.5 * f64::from(id)
}

/// An endpoint of the API, from the request's path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Route {
    /// `/api/login`
    Login,
    /// `/api/items`
    Items,
    /// `/api/items/{id}`: `None` when `id` is not a number (then no such item).
    Item(Option<u32>),
    /// `/api/cart`
    Cart,
}

impl Route {
    /// The endpoint `path` names, or `None` for a path outside the API (the query-shaped
    /// responses serve it).
    pub(super) fn of(path: &str) -> Option<Route> {
        match path.strip_prefix("/api/")? {
            "login" => Some(Route::Login),
            "items" => Some(Route::Items),
            "cart" => Some(Route::Cart),
            rest => rest
                .strip_prefix("items/")
                .map(|id| Route::Item(id.parse().ok())),
        }
    }

    /// The methods this endpoint answers, as an `Allow` header value.
    fn allow(self) -> &'static str {
        match self {
            Route::Login => "POST",
            Route::Items | Route::Item(_) => "GET, HEAD",
            Route::Cart => "GET, HEAD, POST",
        }
    }
}

/// One logged-in user's session: their cart (item ids, oldest first).
#[derive(Debug, Default)]
struct Session {
    cart: Mutex<VecDeque<u32>>,
}

/// One shard of the sessions: by key, and the keys oldest first (for eviction).
#[derive(Debug, Default)]
struct Shard {
    by_key: HashMap<u128, Arc<Session>>,
    order: VecDeque<u128>,
}

/// The API's state and its prebuilt responses; one per server, shared by its connections.
#[derive(Debug)]
pub(super) struct Shop {
    shards: Box<[RwLock<Shard>]>,
    /// `{"items": [...]}`, the body of `GET /api/items`.
    list: Bytes,
    /// Item `id`'s body at `id - 1`, and its `ETag`.
    items: Vec<(Bytes, HeaderValue)>,
}

/// The body of `POST /api/login`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Login {
    user: String,
    password: String,
}

/// The body of `POST /api/cart`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct AddToCart {
    item: u32,
}

impl Shop {
    /// An empty shop: no sessions, the items' bodies built.
    pub(super) fn new() -> Shop {
        let item = |id: u32| json!({"id": id, "name": NAMES[id as usize - 1], "price": price(id)});
        let list = json!({"items": (1..=ITEMS).map(item).collect::<Vec<_>>()});
        let items = (1..=ITEMS)
            .map(|id| {
                let etag = HeaderValue::from_str(&format!("\"item-{id}\"")).expect("an ETag");
                (Bytes::from(item(id).to_string()), etag)
            })
            .collect();
        Shop {
            shards: (0..SHARDS).map(|_| RwLock::default()).collect(),
            list: Bytes::from(list.to_string()),
            items,
        }
    }

    /// Answers a request to `route` (see the module documentation of `serve`).
    pub(super) async fn answer<B>(
        &self,
        route: Route,
        request: Request<B>,
    ) -> Response<ResponseBody>
    where
        B: Body<Data = Bytes>,
        B::Error: Into<BoxError>,
    {
        let (head, body) = request.into_parts();
        let body = match Limited::new(body, MAX_REQUEST_BODY).collect().await {
            Ok(body) => body.to_bytes(),
            Err(error) if error.is::<http_body_util::LengthLimitError>() => {
                let message = format!("the body is over {MAX_REQUEST_BODY} bytes");
                return error_response(StatusCode::PAYLOAD_TOO_LARGE, &message);
            }
            Err(_) => return error_response(StatusCode::BAD_REQUEST, "the body broke off"),
        };
        if head.uri.query().is_some() {
            let message = "the /api/ endpoints take no query parameters";
            return error_response(StatusCode::BAD_REQUEST, message);
        }
        let read = matches!(head.method, Method::GET | Method::HEAD);
        match route {
            Route::Login if head.method == Method::POST => self.login(&body),
            Route::Items if read => json_response(StatusCode::OK, self.list.clone()),
            Route::Item(id) if read => self.item(&head.headers, id),
            Route::Cart if read => self.cart(&head.headers, None),
            Route::Cart if head.method == Method::POST => self.cart(&head.headers, Some(&body)),
            _ => {
                let mut response = error_response(
                    StatusCode::METHOD_NOT_ALLOWED,
                    &format!("use {}", route.allow()),
                );
                let allow = HeaderValue::from_static(route.allow());
                response.headers_mut().insert(header::ALLOW, allow);
                response
            }
        }
    }

    /// `POST /api/login`: a new session for a user whose password is `secret-<user>`.
    fn login(&self, body: &[u8]) -> Response<ResponseBody> {
        let login: Login = match serde_json::from_slice(body) {
            Ok(login) => login,
            Err(error) => {
                let message = format!("expected {{\"user\": ..., \"password\": ...}}: {error}");
                return error_response(StatusCode::BAD_REQUEST, &message);
            }
        };
        let user_ok = !login.user.is_empty() && login.user.len() <= MAX_USER_LEN;
        if !user_ok || login.password.strip_prefix("secret-") != Some(login.user.as_str()) {
            return error_response(StatusCode::UNAUTHORIZED, "wrong user or password");
        }
        let key = self.open_session();
        // The token and the cookie carry the same key: either one finds the session.
        let token = format!("{key:032x}");
        let body = json!({"token": token, "user": login.user}).to_string();
        let mut response = json_response(StatusCode::OK, Bytes::from(body));
        let cookie = format!("{COOKIE}={token}; Path=/; HttpOnly");
        let cookie = HeaderValue::from_str(&cookie).expect("hex digits make a header value");
        response.headers_mut().insert(header::SET_COOKIE, cookie);
        response
    }

    /// `GET /api/items/{id}`: the item, with its `ETag`, to a logged-in user.
    fn item(&self, headers: &HeaderMap, id: Option<u32>) -> Response<ResponseBody> {
        if self.session(headers).is_none() {
            return unauthorized();
        }
        let Some((body, etag)) = id
            .and_then(|id| id.checked_sub(1))
            .and_then(|index| self.items.get(index as usize))
        else {
            return error_response(StatusCode::NOT_FOUND, "no such item");
        };
        let mut response = json_response(StatusCode::OK, body.clone());
        response.headers_mut().insert(header::ETAG, etag.clone());
        response
    }

    /// `GET /api/cart` (`add` is `None`) or `POST /api/cart` (`add` is the body): the session's
    /// cart, after adding the item the body names.
    fn cart(&self, headers: &HeaderMap, add: Option<&[u8]>) -> Response<ResponseBody> {
        let Some(session) = self.session(headers) else {
            return unauthorized();
        };
        let mut status = StatusCode::OK;
        let mut cart = session.cart.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(body) = add {
            let item = match serde_json::from_slice::<AddToCart>(body) {
                Ok(AddToCart { item }) => item,
                Err(error) => {
                    let message = format!("expected {{\"item\": <id>}}: {error}");
                    return error_response(StatusCode::BAD_REQUEST, &message);
                }
            };
            if !(1..=ITEMS).contains(&item) {
                return error_response(StatusCode::NOT_FOUND, "no such item");
            }
            if cart.len() == MAX_CART {
                cart.pop_front();
            }
            cart.push_back(item);
            status = StatusCode::CREATED;
        }
        let body = json!({"cart": &*cart, "count": cart.len()}).to_string();
        drop(cart);
        json_response(status, Bytes::from(body))
    }

    /// Opens a session under a new random key, evicting its shard's oldest session when the
    /// shard is full; returns the key.
    fn open_session(&self) -> u128 {
        let key = fastrand::u128(..);
        let session = Arc::default();
        let mut shard = self.shard(key).write().unwrap_or_else(|e| e.into_inner());
        if shard.order.len() >= MAX_SESSIONS / SHARDS
            && let Some(oldest) = shard.order.pop_front()
        {
            shard.by_key.remove(&oldest);
        }
        shard.by_key.insert(key, session);
        shard.order.push_back(key);
        key
    }

    /// The session of the request: by its `Authorization: Bearer <token>` header, else by its
    /// `session` cookie; `None` when neither names a live session.
    fn session(&self, headers: &HeaderMap) -> Option<Arc<Session>> {
        let token = headers
            .get_all(header::AUTHORIZATION)
            .iter()
            .filter_map(|value| value.to_str().ok())
            .filter_map(|value| {
                let (scheme, token) = value.trim().split_once(' ')?;
                scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
            });
        // HTTP/2 may split the cookies over several `Cookie` fields (RFC 9113 §8.2.3).
        let cookies = headers
            .get_all(header::COOKIE)
            .iter()
            .filter_map(|value| value.to_str().ok())
            .flat_map(|value| value.split(';'))
            .filter_map(|pair| pair.trim().strip_prefix(COOKIE)?.strip_prefix('='));
        token.chain(cookies).find_map(|text| self.lookup(text))
    }

    /// The live session whose key is `text` (32 hex digits).
    fn lookup(&self, text: &str) -> Option<Arc<Session>> {
        if text.len() != 32 || !text.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        let key = u128::from_str_radix(text, 16).ok()?;
        let shard = self.shard(key).read().unwrap_or_else(|e| e.into_inner());
        shard.by_key.get(&key).cloned()
    }

    /// The shard of `key`.
    fn shard(&self, key: u128) -> &RwLock<Shard> {
        &self.shards[key as usize % SHARDS]
    }

    /// The number of live sessions, over all shards.
    #[cfg(test)]
    fn sessions(&self) -> usize {
        self.shards
            .iter()
            .map(|shard| shard.read().unwrap().by_key.len())
            .sum()
    }
}

/// A JSON response of `status` with `body`.
fn json_response(status: StatusCode, body: Bytes) -> Response<ResponseBody> {
    let mut response = Response::new(ResponseBody::Bytes(Some(body)));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// A JSON error response: `{"error": message}`.
fn error_response(status: StatusCode, message: &str) -> Response<ResponseBody> {
    json_response(status, Bytes::from(json!({"error": message}).to_string()))
}

/// `401`, with the `WWW-Authenticate` challenge RFC 9110 §15.5.2 asks for.
fn unauthorized() -> Response<ResponseBody> {
    let mut response = error_response(
        StatusCode::UNAUTHORIZED,
        "log in first: send the token as `Authorization: Bearer <token>` or the session cookie",
    );
    response
        .headers_mut()
        .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bearer(key: u128) -> HeaderMap {
        let mut headers = HeaderMap::new();
        let value = HeaderValue::from_str(&format!("Bearer {key:032x}")).unwrap();
        headers.insert(header::AUTHORIZATION, value);
        headers
    }

    #[test]
    fn routes_are_told_from_the_path() {
        assert_eq!(Route::of("/api/login"), Some(Route::Login));
        assert_eq!(Route::of("/api/items"), Some(Route::Items));
        assert_eq!(Route::of("/api/items/7"), Some(Route::Item(Some(7))));
        assert_eq!(Route::of("/api/items/x"), Some(Route::Item(None)));
        assert_eq!(Route::of("/api/cart"), Some(Route::Cart));
        assert_eq!(Route::of("/api/other"), None);
        assert_eq!(Route::of("/items/7"), None);
        assert_eq!(Route::of("/"), None);
    }

    #[test]
    fn sessions_are_bounded_and_the_oldest_evicted() {
        let shop = Shop::new();
        let first = shop.open_session();
        assert!(shop.session(&bearer(first)).is_some());
        for _ in 0..MAX_SESSIONS * 2 {
            shop.open_session();
        }
        assert!(shop.sessions() <= MAX_SESSIONS, "{}", shop.sessions());
        // Every shard filled up: the oldest session of each is gone, the newest kept.
        assert!(shop.session(&bearer(first)).is_none());
        let last = shop.open_session();
        assert!(shop.session(&bearer(last)).is_some());
    }

    #[test]
    fn a_cookie_among_others_finds_the_session() {
        let shop = Shop::new();
        let key = shop.open_session();
        let mut headers = HeaderMap::new();
        let value = format!("theme=dark; session={key:032x}; x=1");
        headers.insert(header::COOKIE, HeaderValue::from_str(&value).unwrap());
        assert!(shop.session(&headers).is_some());
        headers.insert(header::COOKIE, HeaderValue::from_static("session=00"));
        assert!(shop.session(&headers).is_none());
    }
}
