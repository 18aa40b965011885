//! Keeping the passwords written inside URLs out of logs and printed configuration.

/// Hides the password of a URL such as `amqp://user:secret@host/`.
pub fn redact_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    // Up to the last `@`, not the first `/`: a password with an unencoded `/`, `#`, `?` or `@`
    // would otherwise end the userinfo early and show. An `@` in a path or query masks more
    // than it must, which is the safe side.
    match rest.rsplit_once('@') {
        Some((userinfo, host_and_tail)) => {
            let user = userinfo.split(':').next().unwrap_or("");
            let user = if user.contains(['/', '#', '?']) {
                ""
            } else {
                user
            };
            format!("{scheme}://{user}:***@{host_and_tail}")
        }
        None => url.to_owned(),
    }
}

/// The password of a URL's userinfo, as [`redact_url`] finds it.
pub(crate) fn url_password(url: &str) -> Option<String> {
    let (_, rest) = url.split_once("://")?;
    let (userinfo, _) = rest.rsplit_once('@')?;
    let (_, password) = userinfo.split_once(':')?;
    (!password.is_empty()).then(|| password.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redacts_passwords() {
        assert_eq!(
            redact_url("amqp://u:p@h:5672/%2f"),
            "amqp://u:***@h:5672/%2f"
        );
        assert_eq!(redact_url("redis://h:6379/"), "redis://h:6379/");
        // Passwords with the characters that end a URL's authority, unencoded.
        for (url, secret) in [
            ("amqp://u:pa/ss@h:5672/%2f", "pa/ss"),
            ("amqp://u:pa#ss@h:5672/%2f", "pa#ss"),
            ("redis://:p@ss@h:6379/", "p@ss"),
            ("redis://u:a?b/c#d@h:6379/0", "a?b/c#d"),
            ("amqp://u/x:secret@h/", "secret"),
        ] {
            let shown = redact_url(url);
            assert!(!shown.contains(secret), "{url} → {shown}");
            assert!(shown.contains(":***@h"), "{url} → {shown}");
        }
    }
}
