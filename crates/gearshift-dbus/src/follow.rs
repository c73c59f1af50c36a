//! Following gearshiftd on a bus: its comings and goings (NameOwnerChanged, and a look now and
//! then while it is absent: bus activation, missed signals) and its property changes, as a
//! stream of [`Followed`] updates of the [`DaemonProperties`] model.

use std::collections::HashMap;
use std::time::Duration;

use futures_util::{Stream, StreamExt};
use zbus::fdo::{DBusProxy, NameOwnerChangedStream, PropertiesProxy};
use zbus::message::Type as MessageType;
use zbus::zvariant::OwnedValue;
use zbus::{Connection, MatchRule, MessageStream};

use crate::properties::{properties_proxy, DaemonProperties};
use crate::{BUS_NAME, INTERFACE, OBJECT_PATH};

/// How often to look for gearshiftd while it is absent.
const ABSENT_RETRY: Duration = Duration::from_secs(30);

/// What happened to the daemon.
#[derive(Debug, Clone, PartialEq)]
pub enum Followed {
    /// gearshiftd is on the bus (a new instance, after a restart): all its properties. What
    /// belonged to an earlier instance (stats subscriptions, holds) is gone.
    Appeared(DaemonProperties),
    /// Properties changed: the model with the changes in.
    Changed(DaemonProperties),
    /// gearshiftd is not on the bus (it left, or was never there).
    Gone,
}

/// Follows gearshiftd on `conn`. The first update says whether it is there; the stream ends
/// when the connection does.
pub async fn follow(
    conn: &Connection,
) -> zbus::Result<impl Stream<Item = Followed> + Send + Unpin + 'static> {
    // Listen first, then read: no change falls between the two.
    let owners = DBusProxy::new(conn)
        .await?
        .receive_name_owner_changed_with_args(&[(0, BUS_NAME)])
        .await?;
    let rule = MatchRule::builder()
        .msg_type(MessageType::Signal)
        .sender(BUS_NAME)?
        .path(OBJECT_PATH)?
        .interface("org.freedesktop.DBus.Properties")?
        .member("PropertiesChanged")?
        .build();
    let changes = MessageStream::for_match_rule(rule, conn, Some(256)).await?;
    let follower = Follower {
        props: properties_proxy(conn).await?,
        owners,
        changes,
        current: None,
        started: false,
    };
    Ok(Box::pin(futures_util::stream::unfold(
        follower,
        |mut follower| async move {
            let update = follower.next().await?;
            Some((update, follower))
        },
    )))
}

struct Follower {
    props: PropertiesProxy<'static>,
    owners: NameOwnerChangedStream,
    changes: MessageStream,
    /// The model while the daemon is there.
    current: Option<DaemonProperties>,
    started: bool,
}

impl Follower {
    async fn next(&mut self) -> Option<Followed> {
        if !self.started {
            self.started = true;
            return Some(self.read_all().await);
        }
        loop {
            let absent = self.current.is_none();
            tokio::select! {
                change = self.owners.next() => {
                    let change = change?;
                    let Ok(args) = change.args() else { continue };
                    if args.new_owner().is_some() {
                        return Some(self.read_all().await);
                    }
                    if self.current.take().is_some() {
                        return Some(Followed::Gone);
                    }
                }
                message = self.changes.next() => {
                    let Ok(message) = message? else { continue };
                    let body = message.body();
                    let Ok((iface, changed, invalidated)) = body
                        .deserialize::<(String, HashMap<String, OwnedValue>, Vec<String>)>()
                    else {
                        continue;
                    };
                    if iface != INTERFACE {
                        continue;
                    }
                    match self.current.as_mut() {
                        Some(current) if invalidated.is_empty() => {
                            current.apply(&changed);
                            return Some(Followed::Changed(current.clone()));
                        }
                        // Invalidated values are read again, with the rest.
                        Some(_) => {
                            return Some(match self.read_all().await {
                                Followed::Appeared(model) => Followed::Changed(model),
                                other => other,
                            });
                        }
                        // A change before we had any: the daemon is there.
                        None => return Some(self.read_all().await),
                    }
                }
                _ = tokio::time::sleep(ABSENT_RETRY), if absent => {
                    if let appeared @ Followed::Appeared(_) = self.read_all().await {
                        return Some(appeared);
                    }
                }
            }
        }
    }

    /// Reads every property; [`Followed::Gone`] when the daemon does not answer.
    async fn read_all(&mut self) -> Followed {
        match DaemonProperties::read_with(&self.props).await {
            Ok(model) => {
                self.current = Some(model.clone());
                Followed::Appeared(model)
            }
            Err(_) => {
                self.current = None;
                Followed::Gone
            }
        }
    }
}
