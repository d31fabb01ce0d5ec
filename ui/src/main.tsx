import { createRoot } from "react-dom/client";
import "@xyflow/react/dist/style.css";
import "./styles.css";
import { Api } from "./api";
import { App } from "./App";

const root = document.getElementById("builder-root");
if (root) {
  const entityType = root.dataset.entityType ?? "";
  // data-api-base is the prefix the app is served under; its JSON API is below /api.
  const api = new Api((root.dataset.apiBase ?? "").replace(/\/$/, "") + "/api", root.dataset.csrf ?? null);
  createRoot(root).render(<App api={api} entityType={entityType} definitionsUrl={root.dataset.definitionsUrl ?? ""} />);
}
