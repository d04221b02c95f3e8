//! A connection slot shared by a group's virtual users (HTTP/2 and HTTP/3): one connection
//! per slot carries up to `load.streams` requests at once, one per virtual user of the group.
//!
//! The first virtual user that needs a connection opens it while the others wait, then each
//! sends its requests on a handle to it ([`SlotConn`]). A connection that is done for (closed,
//! or going away after the server's GOAWAY) is dropped from the slot and the next request
//! opens a new one. The connection's setup (handshake timings) is reported once, with the
//! first response on it.
//!
//! One thread: the slot lives in an `Rc` on a worker's runtime, no lock.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use tokio::sync::Notify;

use crate::measure::{ErrorKind, Setup};

/// An open connection as a slot keeps it: what hands out request handles.
pub(crate) trait Link {
    /// What a virtual user holds to send requests on the connection (cheap to clone).
    type Handle;
    /// A new handle to the connection.
    fn handle(&self) -> Self::Handle;
    /// Whether the connection takes no more requests (closed, or going away): the slot then
    /// opens a new one.
    fn is_done(&self) -> bool;
}

/// The connection of one slot, shared by a group's virtual users.
pub(crate) struct Slot<L> {
    /// The open connection and its serial number.
    live: RefCell<Option<(u64, L)>>,
    /// A virtual user is opening the connection; the others wait on `opened`.
    opening: Cell<bool>,
    opened: Notify,
    /// Serial number of the next connection, to tell a dead one from its successor.
    serial: Cell<u64>,
    /// The setup of connection `.0`, until a response on it reports it (a stream that fails
    /// does not: the next one that succeeds, on any handle, does).
    unreported_setup: Cell<Option<(u64, Setup)>>,
}

impl<L> Default for Slot<L> {
    fn default() -> Self {
        Slot {
            live: RefCell::new(None),
            opening: Cell::new(false),
            opened: Notify::new(),
            serial: Cell::new(0),
            unreported_setup: Cell::new(None),
        }
    }
}

/// A connection just opened, with how long opening it took.
pub(crate) struct Opened<L> {
    pub(crate) link: L,
    pub(crate) setup: Setup,
}

/// A virtual user's handle to a slot's connection.
pub(crate) struct SlotConn<L: Link> {
    pub(crate) handle: L::Handle,
    serial: u64,
    slot: Rc<Slot<L>>,
}

impl<L: Link> Slot<L> {
    /// A handle to the slot's open connection; or, when there is none, opens one with `open`
    /// while other virtual users wait.
    pub(crate) async fn connect<F, Fut, E>(self: &Rc<Self>, open: F) -> Result<SlotConn<L>, E>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<Opened<L>, E>>,
    {
        loop {
            if let Some(conn) = self.handle() {
                return Ok(conn);
            }
            if self.opening.get() {
                // Registered on its first poll, before the opener can run again (one thread).
                self.opened.notified().await;
                continue;
            }
            return self.open(open).await;
        }
    }

    /// Installs a connection opened elsewhere (HTTP/2 chosen by ALPN) as the slot's.
    pub(crate) fn install(self: &Rc<Self>, opened: Opened<L>) -> SlotConn<L> {
        let serial = self.serial.get();
        self.serial.set(serial + 1);
        self.unreported_setup.set(Some((serial, opened.setup)));
        let conn = SlotConn {
            handle: opened.link.handle(),
            serial,
            slot: self.clone(),
        };
        *self.live.borrow_mut() = Some((serial, opened.link));
        conn
    }

    fn handle(self: &Rc<Self>) -> Option<SlotConn<L>> {
        let mut live = self.live.borrow_mut();
        if live.as_ref().is_some_and(|(_, l)| l.is_done()) {
            *live = None;
        }
        live.as_ref().map(|(serial, l)| SlotConn {
            handle: l.handle(),
            serial: *serial,
            slot: self.clone(),
        })
    }

    async fn open<F, Fut, E>(self: &Rc<Self>, open: F) -> Result<SlotConn<L>, E>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<Opened<L>, E>>,
    {
        /// Lets the waiting virtual users go on when the opener is done, fails, or is
        /// cancelled by its request's timeout.
        struct Opening<'a, L>(&'a Slot<L>);
        impl<L> Drop for Opening<'_, L> {
            fn drop(&mut self) {
                self.0.opening.set(false);
                self.0.opened.notify_waiters();
            }
        }
        self.opening.set(true);
        let _opening = Opening(&**self);
        let opened = open().await?;
        Ok(self.install(opened))
    }

    /// Forgets the slot's connection, whatever it is: the next request opens anew. It closes
    /// once the handles still in use are dropped (streams in flight finish first).
    pub(crate) fn close(&self) {
        self.live.borrow_mut().take();
    }
}

impl<L: Link> SlotConn<L> {
    /// Marks the setup of this connection, if no response has reported it yet, as done
    /// before the clock started.
    pub(crate) fn mark_pre_connected(&self) {
        if let Some((serial, mut setup)) = self.slot.unreported_setup.get()
            && serial == self.serial
        {
            setup.pre_connected = true;
            self.slot.unreported_setup.set(Some((serial, setup)));
        }
    }

    /// The setup of this connection, if no response has reported it yet.
    pub(crate) fn take_setup(&self) -> Option<Setup> {
        match self.slot.unreported_setup.get() {
            Some((serial, setup)) if serial == self.serial => {
                self.slot.unreported_setup.set(None);
                Some(setup)
            }
            _ => None,
        }
    }

    /// Forgets this connection if it is still the slot's: the next request opens anew.
    pub(crate) fn forget(&self) {
        let mut live = self.slot.live.borrow_mut();
        if live.as_ref().is_some_and(|(s, _)| *s == self.serial) {
            *live = None;
        }
    }
}

/// Why a request on a shared connection failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SlotFailure {
    /// The request was not sent (or, HTTP/3, not processed): the connection was already
    /// going away or closed. Safe to send again on a new connection; the kind counts it if
    /// that fails too.
    NotSent(ErrorKind),
    /// The request failed after it was sent.
    Failed(ErrorKind),
}

impl SlotFailure {
    /// How the failure is counted.
    pub(crate) fn kind(self) -> ErrorKind {
        match self {
            SlotFailure::NotSent(kind) | SlotFailure::Failed(kind) => kind,
        }
    }
}
