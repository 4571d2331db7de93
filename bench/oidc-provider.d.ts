// oidc-provider ships no types for v9; the bench uses a handful of its calls.
declare module "oidc-provider";
