/** A target as commands store it and queries read it (the proto's Target, with the timeout in milliseconds). */
export interface TargetConfig {
  name: string;
  targetType: "rest_webhook" | "rest_request_response";
  url: string;
  timeoutMs: number;
  isAsync: boolean;
  interruptOnError: boolean;
}
