//! Who may do what: root always; others as polkit decides.

use std::collections::HashMap;

use gearshift_dbus::Error;
use zbus::message::Header;
use zbus::names::BusName;
use zbus::Connection;
use zbus_polkit::policykit1::{AuthorityProxy, CheckAuthorizationFlags, Subject};

/// The user id of the sender of the call in `header`, as the bus knows it.
pub async fn caller_uid(conn: &Connection, header: &Header<'_>) -> Result<u32, Error> {
    let unknown =
        |why: String| Error::AccessDenied(format!("Cannot tell who the caller is: {why}"));
    let sender = header
        .sender()
        .ok_or_else(|| unknown("the call has no sender".into()))?;
    let dbus = zbus::fdo::DBusProxy::new(conn)
        .await
        .map_err(|e| unknown(e.to_string()))?;
    dbus.get_connection_unix_user(BusName::from(sender.clone()))
        .await
        .map_err(|e| unknown(e.to_string()))
}

/// Succeeds if the sender of the call in `header` may perform `action`. polkit may ask the
/// user to authenticate (the call then waits for the answer) if the caller allowed it with
/// the message's ALLOW_INTERACTIVE_AUTHORIZATION flag, as the D-Bus spec asks.
pub async fn authorize(conn: &Connection, header: &Header<'_>, action: &str) -> Result<(), Error> {
    let denied = |why: String| Error::AccessDenied(format!("Not authorized for {action}: {why}"));
    let uid = caller_uid(conn, header)
        .await
        .map_err(|e| denied(e.message().to_owned()))?;
    if uid == 0 {
        return Ok(());
    }
    let flags = if header
        .primary()
        .flags()
        .contains(zbus::message::Flags::AllowInteractiveAuth)
    {
        CheckAuthorizationFlags::AllowUserInteraction.into()
    } else {
        Default::default()
    };
    let subject = Subject::new_for_message_header(header).map_err(|e| denied(e.to_string()))?;
    let authority = AuthorityProxy::new(conn)
        .await
        .map_err(|e| denied(format!("polkit is not available ({e})")))?;
    let result = authority
        .check_authorization(&subject, action, &HashMap::new(), flags, "")
        .await
        .map_err(|e| denied(format!("polkit is not available ({e})")))?;
    if result.is_authorized {
        Ok(())
    } else {
        Err(denied(format!("polkit refused uid {uid}")))
    }
}
