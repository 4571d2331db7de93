import type { EventStore } from "../eventstore/eventstore.js";
import { registerActionReducers } from "./action-reducers.js";
import { registerApplicationReducers } from "./applications.js";
import { registerAuthRequestReducers } from "./auth-requests.js";
import { registerIdpReducers } from "./idps.js";
import { registerIdpLinkReducers } from "./idp-links.js";
import { registerLockoutReducers } from "./lockouts.js";
import { registerMembershipReducers } from "./memberships.js";
import { registerNotificationProviderReducers } from "./notification-providers.js";
import { registerOrgReducers } from "./orgs.js";
import { registerProjectReducers } from "./projects.js";
import { registerReducers } from "./reducers.js";
import { registerApiSessionReducers } from "./api-sessions.js";
import { registerBrandingAssetReducers } from "./branding-assets.js";
import { registerUserMetadataReducers } from "./user-metadata.js";
import { registerSessionReducers } from "./sessions.js";
import { registerSigningKeyReducers } from "./signing-keys.js";
import { registerTokenReducers } from "./tokens.js";
import { registerTotpReducers } from "./totp.js";
import { registerWebauthnReducers } from "./webauthn.js";
import { registerUserCodeReducers } from "./user-code-reducers.js";
import { registerUserGrantReducers } from "./user-grants.js";
import { registerUserReducers } from "./user-reducers.js";

/** Every projection of the server, in one place: the server and the bench seed register the same ones. */
export function registerAllReducers(es: EventStore): void {
  registerReducers(es);
  registerActionReducers(es);
  registerIdpReducers(es);
  registerOrgReducers(es);
  registerUserReducers(es);
  registerLockoutReducers(es);
  registerSessionReducers(es);
  registerApiSessionReducers(es);
  registerBrandingAssetReducers(es);
  registerUserMetadataReducers(es);
  registerTotpReducers(es);
  registerMembershipReducers(es);
  registerProjectReducers(es);
  registerApplicationReducers(es);
  registerUserGrantReducers(es);
  registerSigningKeyReducers(es);
  registerAuthRequestReducers(es);
  registerTokenReducers(es);
  registerNotificationProviderReducers(es);
  registerWebauthnReducers(es);
  registerUserCodeReducers(es);
  registerIdpLinkReducers(es);
}
