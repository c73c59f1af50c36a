//! Changing gearshiftd's settings: one function per setting, shared by every client, so each
//! setting changes one way and polkit may ask for a password wherever someone can answer.

use zbus::export::serde::Serialize;
use zbus::proxy::MethodFlags;
use zbus::zvariant::{DynamicType, Value};
use zbus::Proxy;

use crate::{Error, Scheduler1Proxy, INTERFACE};

/// Whether polkit may ask the user to authenticate (a password dialog, or the terminal's
/// agent) before it answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prompt {
    /// Someone can answer a prompt: a desktop app, a terminal.
    Allowed,
    /// Nobody can: a script, a service. polkit answers at once.
    Never,
}

/// Switches to a profile (SetProfile).
pub async fn set_profile(
    proxy: &Scheduler1Proxy<'_>,
    profile: &str,
    prompt: Prompt,
) -> Result<(), Error> {
    call(proxy.inner(), "SetProfile", prompt, &(profile,)).await
}

/// Switches the mode alone (SetMode).
pub async fn set_mode(
    proxy: &Scheduler1Proxy<'_>,
    mode: &str,
    prompt: Prompt,
) -> Result<(), Error> {
    call(proxy.inner(), "SetMode", prompt, &(mode,)).await
}

/// Turns wakeup preemption on or off (SetPreemption).
pub async fn set_preemption(
    proxy: &Scheduler1Proxy<'_>,
    enabled: bool,
    prompt: Prompt,
) -> Result<(), Error> {
    call(proxy.inner(), "SetPreemption", prompt, &(enabled,)).await
}

/// Follows the power source or not (the AutoPowerSource property).
pub async fn set_auto_power_source(
    proxy: &Scheduler1Proxy<'_>,
    on: bool,
    prompt: Prompt,
) -> Result<(), Error> {
    write_property(proxy, "AutoPowerSource", on, prompt).await
}

/// Follows power-profiles-daemon or not (the FollowPowerProfile property).
pub async fn set_follow_power_profile(
    proxy: &Scheduler1Proxy<'_>,
    on: bool,
    prompt: Prompt,
) -> Result<(), Error> {
    write_property(proxy, "FollowPowerProfile", on, prompt).await
}

async fn write_property(
    proxy: &Scheduler1Proxy<'_>,
    name: &str,
    value: bool,
    prompt: Prompt,
) -> Result<(), Error> {
    let inner = proxy.inner();
    let properties = Proxy::new(
        inner.connection(),
        inner.destination().to_owned(),
        inner.path().to_owned(),
        "org.freedesktop.DBus.Properties",
    )
    .await?;
    call(
        &properties,
        "Set",
        prompt,
        &(INTERFACE, name, Value::from(value)),
    )
    .await
}

/// A call that answers nothing but may fail.
async fn call<B>(proxy: &Proxy<'_>, method: &str, prompt: Prompt, body: &B) -> Result<(), Error>
where
    B: Serialize + DynamicType,
{
    let flags = match prompt {
        Prompt::Allowed => MethodFlags::AllowInteractiveAuth.into(),
        Prompt::Never => Default::default(),
    };
    proxy
        .call_with_flags::<_, B, ()>(method, flags, body)
        .await
        .map(|_| ())
        .map_err(Error::from)
}
