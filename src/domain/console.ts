/** Where the admin console lives (docs/contract.md "Admin console"): the server's routes and its OAuth client share these. */
export const CONSOLE_PATH = "/ui/console/";
export const CONSOLE_CALLBACK_PATH = "/ui/console/auth/callback";
/** The console's project and application in every instance's default organisation. */
export const CONSOLE_PROJECT_NAME = "IAM";
export const CONSOLE_APP_NAME = "console";
