import { TransportProvider } from "@connectrpc/connect-query";
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { transport } from "./api";
import { App } from "./app";
import { CALLBACK_PATH, completeSignIn, loadEnvironment, signIn } from "./auth";
import { initialLanguage } from "./i18n";
import { applyTheme } from "./theme";
import "./styles.css";

const queryClient = new QueryClient({ defaultOptions: { queries: { retry: false, refetchOnWindowFocus: false, staleTime: 5_000 } } });
const root = createRoot(document.getElementById("root")!);

function fatal(message: string) {
  root.render(
    <main className="fatal">
      <h1>Console</h1>
      <p role="alert">{message}</p>
      <p>
        <a href="/ui/console/">Try again</a>
      </p>
    </main>,
  );
}

async function start() {
  applyTheme();
  document.documentElement.lang = initialLanguage();
  await loadEnvironment();
  if (location.pathname === CALLBACK_PATH) {
    history.replaceState(null, "", await completeSignIn());
  } else {
    // tokens live in memory: a new page load signs in again (at once while the login session lasts)
    await signIn();
  }
  root.render(
    <StrictMode>
      <TransportProvider transport={transport}>
        <QueryClientProvider client={queryClient}>
          <App />
        </QueryClientProvider>
      </TransportProvider>
    </StrictMode>,
  );
}

start().catch((err: unknown) => fatal(err instanceof Error ? err.message : String(err)));
