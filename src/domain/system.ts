/** The creator of the events the server writes by itself (the first start, signing keys, the console's application). */
export const SYSTEM_CREATOR = "SYSTEM";
