import Config
import Kit

/// Forward-only schema migrations. Each entry moves the database from version i to i+1 inside one
/// transaction; a database newer than this build is refused rather than guessed at.
enum Migrations {
    static let steps: [String] = [
        // 1: identity, device tokens per gateway+role, gateway records (pin, pairing state).
        """
        CREATE TABLE device_identity (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            algorithm TEXT NOT NULL,
            private_seed BLOB NOT NULL,
            public_key BLOB NOT NULL,
            created_at_ms INTEGER NOT NULL
        ) STRICT;
        CREATE TABLE device_tokens (
            gateway TEXT NOT NULL,
            role TEXT NOT NULL,
            token TEXT NOT NULL,
            scopes TEXT NOT NULL DEFAULT '',
            issued_at_ms INTEGER,
            stored_at_ms INTEGER NOT NULL,
            PRIMARY KEY (gateway, role)
        ) STRICT;
        CREATE TABLE gateways (
            gateway TEXT PRIMARY KEY,
            url TEXT NOT NULL,
            tls_pin TEXT,
            display_name TEXT,
            pairing_state TEXT NOT NULL DEFAULT 'unknown',
            pairing_request_id TEXT,
            last_error TEXT,
            last_seen_ms INTEGER,
            updated_at_ms INTEGER NOT NULL
        ) STRICT;
        CREATE TABLE settings (
            key TEXT PRIMARY KEY,
            value TEXT NOT NULL
        ) STRICT;
        """,
        // 2: documents capabilities keep (the system bundle's exec approvals), one row per
        // capability and name, replaced whole by compare-and-swap.
        """
        CREATE TABLE capability_documents (
            capability TEXT NOT NULL,
            name TEXT NOT NULL,
            body TEXT NOT NULL,
            updated_at_ms INTEGER NOT NULL,
            PRIMARY KEY (capability, name)
        ) STRICT;
        """,
    ]

    static var latest: Int { steps.count }
}
