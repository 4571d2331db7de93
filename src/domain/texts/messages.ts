/**
 * The messages the server sends, in English (./languages/ has the others). `{name}`, `{code}`, `{link}`, `{minutes}` (and `{username}`, the new one, in domainClaimed) are filled in when sent. The text settings override the
 * subject and text of each per language and context.
 */
export type MessageKind = "verifyEmail" | "verifyPhone" | "initPassword" | "resetPassword" | "unlockUser" | "otpEmail" | "otpSms" | "domainClaimed";

export interface Template {
  subject: string;
  /** Plain text; the HTML part is derived from it (escaped, the link made clickable). */
  text: string;
}

export type Catalogue = Record<MessageKind, Template>;

export const messagesEn: Catalogue = {
  verifyEmail: {
    subject: "Verify your e-mail address",
    text: "Hello {name},\n\nyour code is {code}. Enter it, or open this link to verify your e-mail address:\n{link}\n\nThe code is valid for {minutes} minutes. If you did not ask for it, ignore this message.",
  },
  verifyPhone: {
    subject: "Verify your phone number",
    text: "Your verification code is {code}. It is valid for {minutes} minutes.",
  },
  initPassword: {
    subject: "Set up your account",
    text: "Hello {name},\n\nan account was created for you. Open this link to verify your e-mail address and choose your password:\n{link}\n\nThe link works once, for {minutes} minutes.",
  },
  resetPassword: {
    subject: "Reset your password",
    text: "Hello {name},\n\nsomeone asked to reset the password of your account. Open this link to choose a new one:\n{link}\n\nThe link works once, for {minutes} minutes. If you did not ask for it, ignore this message: your password stays as it is.",
  },
  unlockUser: {
    subject: "Your account is locked",
    text: "Hello {name},\n\nyour account was locked after too many wrong passwords. If that was you, open this link to unlock it:\n{link}\n\nThe link works once, for {minutes} minutes. If it was not you, someone tried to guess your password: consider changing it.",
  },
  otpEmail: {
    subject: "Your sign-in code",
    text: "Hello {name},\n\nyour sign-in code is {code}. It is valid for {minutes} minutes. If you are not signing in, someone knows your password: change it.",
  },
  otpSms: {
    subject: "Your sign-in code",
    text: "Your sign-in code is {code}. It is valid for {minutes} minutes.",
  },
  domainClaimed: {
    subject: "Your username has changed",
    text: "Hello {name},\n\nthe organisation that owns the domain of your username has verified it, so your username was changed to {username}. Sign in with it from now on; you can choose another one in your account.",
  },
};
