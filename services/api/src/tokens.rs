//! API tokens: `trawl_` and 64 hex digits, shown once at creation. The store keeps only the
//! SHA-256 of each token with its record, so a leaked store reveals no usable token.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use trawl_store::{Store, StoreError};

const PREFIX: &str = "trawl_";

/// What the store keeps for a token.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TokenRecord {
    /// Public id: names the token in listings, logs and batch ownership.
    pub id: String,
    pub name: String,
    pub created_at: chrono::DateTime<chrono::Utc>,
    /// A read-only token reads the batches of the token with this id, and submits and cancels
    /// nothing: for people who should only read a team's results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reads_for: Option<String>,
}

/// What a new token may do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Scope {
    /// Submit, read and cancel its own batches.
    Full,
    /// Read the batches of the token with this id.
    ReadOnlyOf(String),
}

#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("the system's random source failed: {0}")]
    Random(String),
    #[error("no token with id {0}")]
    Unknown(String),
    #[error("token {0} is itself read-only: give the id of the token that submits the batches (`trawl token list`)")]
    ReadOnlyOfReadOnly(String),
    #[error("a token's name must be 1 to {MAX_NAME_CHARS} characters without control characters")]
    BadName,
}

/// Longest token name, in characters.
pub(crate) const MAX_NAME_CHARS: usize = 128;

impl TokenRecord {
    /// The token whose batches this one sees: itself, or the one a read-only token reads for.
    pub fn owner(&self) -> &str {
        self.reads_for.as_deref().unwrap_or(&self.id)
    }

    pub fn read_only(&self) -> bool {
        self.reads_for.is_some()
    }

    /// The name fit for a terminal: control characters (escape sequences) shown escaped, as
    /// a name stored before names were checked may hold them.
    pub fn display_name(&self) -> String {
        self.name
            .chars()
            .flat_map(|c| match c.is_control() {
                true => c.escape_default().collect::<Vec<_>>(),
                false => vec![c],
            })
            .collect()
    }
}

fn hash(token: &str) -> String {
    let digest = Sha256::digest(token.as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

fn random_hex(bytes: usize) -> Result<String, TokenError> {
    let mut buf = vec![0u8; bytes];
    getrandom::fill(&mut buf).map_err(|e| TokenError::Random(e.to_string()))?;
    Ok(buf.iter().map(|b| format!("{b:02x}")).collect())
}

/// Creates a token named `name` that may do what `scope` says; returns the token (to show
/// once) and its record. A read-only token reads for a token that exists and is not read-only.
pub async fn create(
    store: &dyn Store,
    name: &str,
    scope: Scope,
) -> Result<(String, TokenRecord), TokenError> {
    let chars = name.chars().count();
    if chars == 0 || chars > MAX_NAME_CHARS || name.chars().any(char::is_control) {
        return Err(TokenError::BadName);
    }
    let reads_for = match scope {
        Scope::Full => None,
        Scope::ReadOnlyOf(id) => {
            let of = list(store).await?.into_iter().find(|r| r.id == id);
            match of {
                None => return Err(TokenError::Unknown(id)),
                Some(r) if r.read_only() => return Err(TokenError::ReadOnlyOfReadOnly(id)),
                Some(_) => Some(id),
            }
        }
    };
    let token = format!("{PREFIX}{}", random_hex(32)?);
    let record = TokenRecord {
        id: random_hex(6)?,
        name: name.to_owned(),
        created_at: chrono::Utc::now(),
        reads_for,
    };
    let json = serde_json::to_vec(&record).expect("a token record serialises");
    store.token_put(&hash(&token), &json).await?;
    Ok((token, record))
}

/// The record of a presented token, if it is one.
pub async fn verify(store: &dyn Store, token: &str) -> Result<Option<TokenRecord>, StoreError> {
    if !token.starts_with(PREFIX) || token.len() != PREFIX.len() + 64 {
        return Ok(None);
    }
    Ok(store
        .token_get(&hash(token))
        .await?
        .and_then(|bytes| serde_json::from_slice(&bytes).ok()))
}

/// Every token's record, oldest first.
pub async fn list(store: &dyn Store) -> Result<Vec<TokenRecord>, StoreError> {
    let mut records: Vec<TokenRecord> = store
        .tokens()
        .await?
        .values()
        .filter_map(|bytes| serde_json::from_slice(bytes).ok())
        .collect();
    records.sort_by_key(|r| r.created_at);
    Ok(records)
}

/// Revokes the token with public id `id`.
pub async fn revoke(store: &dyn Store, id: &str) -> Result<(), TokenError> {
    for (h, bytes) in store.tokens().await? {
        if serde_json::from_slice::<TokenRecord>(&bytes).is_ok_and(|r| r.id == id) {
            store.token_delete(&h).await?;
            return Ok(());
        }
    }
    Err(TokenError::Unknown(id.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use trawl_store::{prelude::*, MemoryStore};

    #[tokio::test]
    async fn tokens_verify_until_revoked_and_are_stored_hashed() {
        let store = MemoryStore::new();
        let (token, record) = create(&store, "ci", Scope::Full).await.unwrap();
        assert!(token.starts_with("trawl_") && token.len() == 70);
        assert_eq!(verify(&store, &token).await.unwrap(), Some(record.clone()));
        // Only the hash is a key, and the record holds no secret.
        let stored = store.tokens().await.unwrap();
        assert!(stored.contains_key(&hash(&token)));
        assert!(!String::from_utf8_lossy(&stored[&hash(&token)]).contains(&token[6..]));
        let other = format!("trawl_{}", "0".repeat(64));
        assert_eq!(verify(&store, &other).await.unwrap(), None);
        assert_eq!(verify(&store, "Bearer junk").await.unwrap(), None);
        assert_eq!(list(&store).await.unwrap(), vec![record.clone()]);
        revoke(&store, &record.id).await.unwrap();
        assert_eq!(verify(&store, &token).await.unwrap(), None);
        assert!(matches!(
            revoke(&store, &record.id).await,
            Err(TokenError::Unknown(_))
        ));
    }

    /// Issue 25: a name cannot carry terminal escapes, and one stored before is shown escaped.
    #[tokio::test]
    async fn names_cannot_drive_a_terminal() {
        let store = MemoryStore::new();
        for bad in ["", "evil\u{1b}[2J", "a\nb", &"x".repeat(MAX_NAME_CHARS + 1)] {
            assert!(
                matches!(
                    create(&store, bad, Scope::Full).await,
                    Err(TokenError::BadName)
                ),
                "{bad:?}"
            );
        }
        let old = TokenRecord {
            id: "abc".into(),
            name: "evil\u{1b}[2J".into(),
            created_at: chrono::Utc::now(),
            reads_for: None,
        };
        assert_eq!(old.display_name(), "evil\\u{1b}[2J");
    }

    /// A read-only token sees its owner's batches; it reads for a token that exists and that
    /// can itself submit.
    #[tokio::test]
    async fn a_read_only_token_reads_for_a_full_one() {
        let store = MemoryStore::new();
        let (_, full) = create(&store, "team", Scope::Full).await.unwrap();
        assert_eq!((full.owner(), full.read_only()), (full.id.as_str(), false));
        let (token, reader) = create(&store, "viewer", Scope::ReadOnlyOf(full.id.clone()))
            .await
            .unwrap();
        let verified = verify(&store, &token).await.unwrap().unwrap();
        assert_eq!(
            (verified.owner(), verified.read_only()),
            (full.id.as_str(), true)
        );
        assert!(matches!(
            create(&store, "x", Scope::ReadOnlyOf(reader.id.clone())).await,
            Err(TokenError::ReadOnlyOfReadOnly(id)) if id == reader.id
        ));
        assert!(matches!(
            create(&store, "x", Scope::ReadOnlyOf("nope".into())).await,
            Err(TokenError::Unknown(_))
        ));
    }
}
