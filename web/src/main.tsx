import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { Link, Redirect, Route, Switch, useLocation } from "wouter-preact";
import { auth, isAdmin, session, whenUnauthorized, type Me } from "./api";
import { ErrorBox, Loading } from "./ui";
import { SignInPage, InvitePage } from "./pages/SignIn";
import { SessionsPage } from "./pages/Sessions";
import { SessionPage } from "./pages/Session";
import { TracePage } from "./pages/Trace";
import { IssuesPage, IssuePage } from "./pages/Issues";
import { WebhooksPage, WebhookPage } from "./pages/Webhooks";
import { SettingsPage } from "./pages/Settings";
import { DeadLettersPage } from "./pages/DeadLetters";
import { OrganizationPage } from "./pages/Organization";
import { SetupPage } from "./pages/Setup";
import { FirstTracePage } from "./pages/FirstTrace";
import { OverviewPage } from "./pages/Overview";
import { MonitorsPage } from "./pages/Monitors";
import { MonitorPage } from "./pages/MonitorPage";
import { EvaluatorsPage } from "./pages/Evaluations";
import { ReviewQueuePage } from "./pages/Reviews";
import { LedgerPage } from "./pages/Ledger";

function Shell({ me, onSignOut }: { me: Me; onSignOut: () => void }) {
  const [location] = useLocation();
  const nav = [
    ["/overview", "Overview"],
    ["/sessions", "Sessions"],
    ["/issues", "Issues"],
    ["/monitors", "Monitors"],
    ["/evaluators", "Evaluators"],
    ["/reviews", "Review"],
    ["/ledger", "Ledger"],
    ...(isAdmin(me)
      ? [
          ["/webhooks", "Webhooks"],
          ["/dead-letters", "Dead letters"],
        ]
      : []),
    ["/organization", "Organization"],
    ["/settings", "Settings"],
  ];
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <Link href="/overview" class="brand">
          Cellar
        </Link>
        <nav aria-label="Main">
          <ul>
            {nav.map(([href, label]) => (
              <li key={href}>
                <Link href={href} aria-current={location.startsWith(href) ? "page" : undefined}>
                  {label}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <div class="who">
          <span class="muted" title={me.tenant.name}>
            {me.user.email} · {me.user.role}
          </span>
          <button type="button" class="link" onClick={onSignOut}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main">
        <Switch>
          <Route path="/overview">{() => <OverviewPage me={me} />}</Route>
          <Route path="/sessions">{() => <SessionsPage me={me} />}</Route>
          <Route path="/sessions/:service/:sessionId">
            {(p) => <SessionPage me={me} service={p.service} sessionId={p.sessionId} />}
          </Route>
          <Route path="/traces/:service/:traceId">{(p) => <TracePage service={p.service} traceId={p.traceId} />}</Route>
          <Route path="/issues">{() => <IssuesPage me={me} />}</Route>
          <Route path="/issues/:service/:issueId">{(p) => <IssuePage service={p.service} issueId={p.issueId} />}</Route>
          <Route path="/webhooks">{() => (isAdmin(me) ? <WebhooksPage me={me} /> : <Forbidden />)}</Route>
          <Route path="/webhooks/:id">{(p) => (isAdmin(me) ? <WebhookPage me={me} id={p.id} /> : <Forbidden />)}</Route>
          <Route path="/dead-letters">{() => (isAdmin(me) ? <DeadLettersPage /> : <Forbidden />)}</Route>
          <Route path="/monitors">{() => <MonitorsPage me={me} />}</Route>
          <Route path="/evaluators">{() => <EvaluatorsPage me={me} />}</Route>
          <Route path="/reviews">{() => <ReviewQueuePage me={me} />}</Route>
          <Route path="/ledger">{() => <LedgerPage me={me} />}</Route>
          <Route path="/monitors/:id">{(p) => <MonitorPage me={me} id={p.id} />}</Route>
          <Route path="/settings">{() => <SettingsPage me={me} />}</Route>
          <Route path="/organization">{() => <OrganizationPage me={me} />}</Route>
          <Route path="/first-trace">{() => <FirstTracePage me={me} />}</Route>
          <Route path="/">
            <Redirect to="/overview" replace />
          </Route>
          <Route path="/sign-in">
            <Redirect to="/overview" replace />
          </Route>
          <Route>
            <h1>Page not found</h1>
            <p>
              <Link href="/sessions">Back to sessions</Link>
            </p>
          </Route>
        </Switch>
      </main>
    </>
  );
}

function Forbidden() {
  return (
    <section>
      <h1>Not available for your role</h1>
      <p role="alert">Managing webhooks needs the admin or owner role. Ask an admin of your organization.</p>
    </section>
  );
}

function App() {
  const [me, setMe] = useState<Me | null>(null);
  const [error, setError] = useState<Error | undefined>();
  const [signedIn, setSignedIn] = useState(!!session.token);
  const [expired, setExpired] = useState(false);
  const [location, navigate] = useLocation();
  // First run: a deployment without an organization shows the setup page (docs/dashboard.md).
  const [setupNeeded, setSetupNeeded] = useState<boolean | null>(signedIn ? false : null);
  useEffect(() => {
    if (setupNeeded === null)
      auth<{ needed: boolean }>("/setup").then(
        (r) => setSetupNeeded(r.needed),
        () => setSetupNeeded(false),
      );
  }, [setupNeeded]);

  useEffect(() => {
    whenUnauthorized(() => {
      setMe(null);
      setSignedIn(false);
      setExpired(true);
    });
  }, []);
  // Bumped when the signed-in user changes without signing out first (an invitation accepted
  // while someone else is signed in): `me` is read again for the new token.
  const [meVersion, setMeVersion] = useState(0);
  useEffect(() => {
    if (!signedIn) return;
    auth<Me>("/me").then(setMe, setError);
  }, [signedIn, meVersion]);

  if (location === "/invite")
    return (
      <InvitePage
        onSignedIn={() => {
          setExpired(false);
          setMe(null);
          setMeVersion((v) => v + 1);
          setSignedIn(true);
          navigate("/sessions");
        }}
      />
    );
  if (!signedIn && setupNeeded === null)
    return (
      <main id="main">
        <Loading />
      </main>
    );
  if (!signedIn && setupNeeded)
    return (
      <SetupPage
        onSignedIn={() => {
          setSetupNeeded(false);
          setSignedIn(true);
          navigate("/first-trace");
        }}
      />
    );
  if (!signedIn) {
    return (
      <SignInPage
        expired={expired}
        onSignedIn={() => {
          setExpired(false);
          setSignedIn(true);
          if (location === "/" || location === "/sign-in") navigate("/overview");
        }}
      />
    );
  }
  if (!me) return <main id="main">{error ? <ErrorBox error={error} /> : <Loading />}</main>;
  const signOut = async () => {
    await auth("/sign-out", { method: "POST" }).catch(() => {});
    session.clear();
    setMe(null);
    setSignedIn(false);
    setExpired(false);
    navigate("/sign-in");
  };
  return <Shell me={me} onSignOut={signOut} />;
}

render(<App />, document.getElementById("app")!);
