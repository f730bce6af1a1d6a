// Sign in: the operator pastes a token; it lives in this tab's session storage only.
import { useNavigate } from "@tanstack/react-router";
import { useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { api, setToken } from "../api/client";
import { ErrorNote } from "../components/ui";

export function LoginPage() {
  const [token, setValue] = useState("");
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const navigate = useNavigate();
  const queries = useQueryClient();
  return (
    <main className="login" id="main">
      <form
        className="card"
        aria-label="sign in"
        onSubmit={async (event) => {
          event.preventDefault();
          setBusy(true);
          setError(null);
          setToken(token.trim());
          try {
            await api("get", "/v1/whoami");
            queries.clear();
            await navigate({ to: "/" });
          } catch (refused) {
            setToken("");
            setError(refused);
          } finally {
            setBusy(false);
          }
        }}
      >
        <header className="card-head">
          <h1>ENGRAM · operator dashboard</h1>
        </header>
        <div className="card-body">
          <label htmlFor="token" className="label">
            bearer token
          </label>
          <input
            id="token"
            type="password"
            autoComplete="off"
            value={token}
            onChange={(event) => setValue(event.target.value)}
            placeholder="paste a read, write or admin token"
            required
          />
          <p className="muted">
            Kept in this tab's session storage only. <code>make run</code> writes a development admin token to{" "}
            <code>data/run/dev-token</code>.
          </p>
          <ErrorNote error={error} />
          <button type="submit" className="primary" disabled={busy || !token.trim()}>
            {busy ? "checking…" : "sign in"}
          </button>
        </div>
      </form>
    </main>
  );
}
