//! Tokens kept between runs: one JSON file per source, readable by its owner only.
//!
//! The file is created with mode 0600 inside a directory created with mode 0700, and written
//! whole to a temporary file in the same directory then renamed over the old one, so a crash
//! mid-write never leaves half a token file and no other user ever sees one. Its contents are
//! never logged (rmcp's `StoredCredentials` redacts the token in `Debug`).

use std::io::Write as _;
use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _};
use std::path::{Path, PathBuf};

use async_trait::async_trait;
use rmcp::transport::auth::{AuthError, CredentialStore, StoredCredentials};

/// A [`CredentialStore`] in one file.
#[derive(Debug, Clone)]
pub(crate) struct FileCredentialStore {
    path: PathBuf,
}

impl FileCredentialStore {
    pub(crate) fn new(path: PathBuf) -> Self {
        Self { path }
    }

    /// The default file of `source`: `<config dir>/otc-bridge/tokens/<source>.json`
    /// (`~/.config` on Linux, `~/Library/Application Support` on macOS).
    pub(crate) fn default_path(source: &str) -> Option<PathBuf> {
        let safe: String = source
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        dirs::config_dir().map(|dir| {
            dir.join("otc-bridge")
                .join("tokens")
                .join(format!("{safe}.json"))
        })
    }

    #[cfg(test)]
    fn path(&self) -> &Path {
        &self.path
    }

    fn write(&self, bytes: &[u8]) -> std::io::Result<()> {
        let dir = self.path.parent().unwrap_or(Path::new("."));
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)?;
        let temporary = dir.join(format!(
            ".{}.{}.tmp",
            self.path
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or("tokens"),
            std::process::id()
        ));
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&temporary)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(&temporary, &self.path)
    }
}

fn store_error(what: &str, path: &Path, error: impl std::fmt::Display) -> AuthError {
    AuthError::CredentialStoreError(format!("cannot {what} {}: {error}", path.display()))
}

#[async_trait]
impl CredentialStore for FileCredentialStore {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        match crate::file::read(&self.path, crate::file::MAX_CONFIG_BYTES) {
            Ok(bytes) => serde_json::from_slice(&bytes)
                .map(Some)
                .map_err(|e| store_error("read the tokens in", &self.path, e)),
            Err(error) if error.is_not_found() => Ok(None),
            Err(error) => Err(store_error("read", &self.path, error)),
        }
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        let bytes = serde_json::to_vec_pretty(&credentials)
            .map_err(|e| store_error("write the tokens to", &self.path, e))?;
        self.write(&bytes)
            .map_err(|e| store_error("write", &self.path, e))
    }

    async fn clear(&self) -> Result<(), AuthError> {
        match std::fs::remove_file(&self.path) {
            Ok(()) => Ok(()),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(error) => Err(store_error("remove", &self.path, error)),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt as _;

    use super::*;

    #[tokio::test]
    async fn tokens_round_trip_in_a_file_only_its_owner_can_read() {
        let dir = std::env::temp_dir().join(format!("otc-store-{}", std::process::id()));
        let store = FileCredentialStore::new(dir.join("nested/source.json"));
        assert!(store.load().await.unwrap().is_none());
        let credentials =
            StoredCredentials::new("client-1".into(), None, vec!["read".into()], Some(1));
        store.save(credentials).await.unwrap();
        let mode = std::fs::metadata(store.path())
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        let dir_mode = std::fs::metadata(dir.join("nested"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(dir_mode & 0o777, 0o700);
        let loaded = store.load().await.unwrap().unwrap();
        assert_eq!(loaded.client_id, "client-1");
        assert_eq!(loaded.granted_scopes, ["read"]);
        store.clear().await.unwrap();
        assert!(store.load().await.unwrap().is_none());
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn the_default_file_is_per_source_and_safe_to_name() {
        let path = FileCredentialStore::default_path("../evil source").unwrap();
        assert!(
            path.ends_with("otc-bridge/tokens/___evil_source.json"),
            "{}",
            path.display()
        );
    }
}
